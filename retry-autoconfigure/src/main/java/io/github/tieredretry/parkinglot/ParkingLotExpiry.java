package io.github.tieredretry.parkinglot;

import java.time.Clock;
import java.time.Instant;

import com.rabbitmq.client.GetResponse;
import io.github.tieredretry.parkinglot.ParkingLotScanner.Decision;

/**
 * Removes the parked messages that the retention limits no longer keep, in one pass from
 * the oldest: the parking lot is in the order messages were parked, so the pass stops at
 * the first message that is young enough and within the count. A message without a
 * {@code retry-parked-at} header (put there by the broker: {@code unroutable}) has no
 * known age and is removed only for the count.
 */
final class ParkingLotExpiry {

	private final ParkingLotScanner scanner;

	private final Clock clock;

	ParkingLotExpiry(ParkingLotScanner scanner, Clock clock) {
		this.scanner = scanner;
		this.clock = clock;
	}

	RetentionResult removeExpired(RetentionLimits limits) {
		if (!limits.limited()) {
			return new RetentionResult(this.scanner.parkingLot(), 0, 0, 0);
		}
		Instant oldestKept = (limits.maxAge() != null) ? this.clock.instant().minus(limits.maxAge()) : null;
		long[] removed = { 0, 0 };
		long[] excess = { -1 };
		ParkingLotScanner.Pass pass = this.scanner.pass(Long.MAX_VALUE, new ParkingLotScanner.Visitor() {

			private long index;

			private boolean done;

			@Override
			public boolean wantsMore() {
				return !this.done;
			}

			@Override
			public Decision visit(GetResponse message) {
				if (excess[0] < 0) {
					// The depth when the pass started, counting this message.
					excess[0] = (limits.maxCount() != null)
							? Math.max(0, message.getMessageCount() + 1 - limits.maxCount()) : 0;
				}
				boolean beyondCount = this.index++ < excess[0];
				Instant parkedAt = ParkedMessages.describe(message).parkedAt();
				boolean tooOld = oldestKept != null && parkedAt != null && parkedAt.isBefore(oldestKept);
				if (tooOld) {
					removed[0]++;
					return Decision.REMOVE;
				}
				if (beyondCount) {
					removed[1]++;
					return Decision.REMOVE;
				}
				if (parkedAt != null || oldestKept == null) {
					// Young enough and within the count: so is everything parked after
					// it.
					this.done = true;
					return Decision.KEEP_AND_STOP;
				}
				return Decision.KEEP;
			}

		});
		return new RetentionResult(this.scanner.parkingLot(), removed[0], removed[1], pass.count());
	}

}
