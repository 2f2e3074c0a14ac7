package io.github.tieredretry.internal.parkinglot;

import java.util.function.Consumer;

import com.rabbitmq.client.GetResponse;
import io.github.tieredretry.internal.parkinglot.ParkingLotScanner.Decision;
import io.github.tieredretry.parkinglot.ParkedMessage;
import io.github.tieredretry.parkinglot.ParkedMessageFilter;
import io.github.tieredretry.parkinglot.ParkingLotRequestException;

/**
 * Looks at parked messages without taking any: hands the matching ones on. Peek, groups
 * and the dry runs of replay and purge use it.
 */
class ParkedMessageLooker implements ParkingLotScanner.Visitor {

	private final ParkedMessageFilter filter;

	private final Consumer<ParkedMessage> matching;

	private int matched;

	ParkedMessageLooker(ParkedMessageFilter filter, Consumer<ParkedMessage> matching) {
		this.filter = filter;
		this.matching = matching;
	}

	int matched() {
		return this.matched;
	}

	@Override
	public boolean wantsMore() {
		return true;
	}

	@Override
	public Decision visit(GetResponse response) {
		ParkedMessage message = ParkedMessages.describe(response);
		if (this.filter.matches(message)) {
			this.matched++;
			this.matching.accept(message);
		}
		return Decision.KEEP;
	}

	/**
	 * Check a limit of a request.
	 * @param name the limit's name in the request
	 * @param value its value
	 * @param max the highest value allowed
	 * @throws ParkingLotRequestException when it is out of range
	 */
	static void checkRange(String name, int value, int max) {
		if (value < 1 || value > max) {
			throw new ParkingLotRequestException(name + " must be between 1 and " + max + " but was " + value);
		}
	}

	/**
	 * Whether a pass stopped at its scan limit before it had seen every parked message.
	 * @param pass the pass
	 * @param scanLimit its scan limit
	 * @return whether the answer covers only part of the parking lot
	 */
	static boolean isPartial(ParkingLotScanner.Pass pass, long scanLimit) {
		return pass.count() >= scanLimit && pass.count() < pass.depth();
	}

}
