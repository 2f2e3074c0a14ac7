package io.github.tieredretry.internal.parkinglot;

import com.rabbitmq.client.GetResponse;
import io.github.tieredretry.internal.parkinglot.ParkingLotScanner.Decision;
import io.github.tieredretry.parkinglot.ParkedMessageFilter;
import io.github.tieredretry.parkinglot.ParkingLotRequest;
import io.github.tieredretry.parkinglot.ParkingLotRequestException;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.parkinglot.PurgeResult;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Removes parked messages for good, or says what a purge would remove: the purges of
 * {@link ParkingLotService}.
 */
final class ParkingLotPurges {

	private static final Log logger = LogFactory.getLog(ParkingLotService.class);

	private final ParkingLotScanner scanner;

	ParkingLotPurges(ParkingLotScanner scanner) {
		this.scanner = scanner;
	}

	PurgeResult purgeAsRequested(ParkingLotRequest request) {
		if (request.filter().matchesAll() && !request.all() && !request.dryRun()) {
			throw new ParkingLotRequestException("A purge without a filter removes every parked message of '"
					+ parkingLot() + "', also those of other applications that share it: say all=true to do that, "
					+ "or filter (queue, group, exception, reason, parkedAfter, parkedBefore, messageId)");
		}
		return request.dryRun() ? previewPurge(request.filter(), request.scanLimitOrDefault())
				: purgeMatching(request.filter());
	}

	PurgeResult purgeMatching(ParkedMessageFilter filter) {
		if (filter.matchesAll()) {
			long purged = this.scanner.purgeAll();
			logger.info("Purged " + purged + " parked message(s) from '" + parkingLot() + "'");
			return new PurgeResult(parkingLot(), false, purged, purged, 0, false);
		}
		long[] purged = { 0 };
		ParkingLotScanner.Pass pass = this.scanner.pass(Long.MAX_VALUE, new ParkingLotScanner.Visitor() {

			@Override
			public boolean wantsMore() {
				return true;
			}

			@Override
			public Decision visit(GetResponse message) {
				if (filter.matches(ParkedMessages.describe(message))) {
					purged[0]++;
					return Decision.REMOVE;
				}
				return Decision.KEEP;
			}

		});
		logger.info("Purged " + purged[0] + " parked message(s) matching " + filter + " from '" + parkingLot() + "'");
		return new PurgeResult(parkingLot(), false, purged[0], purged[0], pass.count(), false);
	}

	PurgeResult previewPurge(ParkedMessageFilter filter, int scanLimit) {
		ParkedMessageLooker.checkRange("scanLimit", scanLimit, ParkingLotService.MAX_SCAN_LIMIT);
		ParkedMessageLooker looker = new ParkedMessageLooker(filter, (message) -> {
		});
		ParkingLotScanner.Pass pass = this.scanner.pass(scanLimit, looker);
		return new PurgeResult(parkingLot(), true, looker.matched(), 0, pass.count(),
				ParkedMessageLooker.isPartial(pass, scanLimit));
	}

	private String parkingLot() {
		return this.scanner.parkingLot();
	}

}
