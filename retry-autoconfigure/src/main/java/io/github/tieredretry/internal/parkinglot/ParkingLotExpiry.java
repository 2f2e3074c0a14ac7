package io.github.tieredretry.internal.parkinglot;

import java.time.Clock;
import java.time.Instant;

import com.rabbitmq.client.GetResponse;
import io.github.tieredretry.internal.parkinglot.ParkingLotScanner.Decision;
import io.github.tieredretry.parkinglot.RetentionLimits;
import io.github.tieredretry.parkinglot.RetentionResult;
import org.jspecify.annotations.Nullable;

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
		Expired expired = new Expired(limits.maxCount(), oldestKept);
		ParkingLotScanner.Pass pass = this.scanner.pass(Long.MAX_VALUE, expired);
		return new RetentionResult(this.scanner.parkingLot(), expired.olderThanMaxAge, expired.beyondMaxCount,
				pass.count());
	}

	/** Decides, from the oldest, which messages go; counts them. */
	private static final class Expired implements ParkingLotScanner.Visitor {

		private final @Nullable Long maxCount;

		private final @Nullable Instant oldestKept;

		private long excess;

		private long index;

		long olderThanMaxAge;

		long beyondMaxCount;

		Expired(@Nullable Long maxCount, @Nullable Instant oldestKept) {
			this.maxCount = maxCount;
			this.oldestKept = oldestKept;
		}

		@Override
		public void started(long depth) {
			this.excess = (this.maxCount != null) ? Math.max(0, depth - this.maxCount) : 0;
		}

		@Override
		public boolean wantsMore() {
			return true;
		}

		@Override
		public Decision visit(GetResponse message) {
			boolean beyondCount = this.index++ < this.excess;
			Instant parkedAt = ParkedMessages.describe(message).parkedAt();
			if (this.oldestKept != null && parkedAt != null && parkedAt.isBefore(this.oldestKept)) {
				this.olderThanMaxAge++;
				return Decision.REMOVE;
			}
			if (beyondCount) {
				this.beyondMaxCount++;
				return Decision.REMOVE;
			}
			// Young enough and within the count: so is everything parked after it. A
			// message of unknown age says nothing about those behind it.
			return (parkedAt != null || this.oldestKept == null) ? Decision.KEEP_AND_STOP : Decision.KEEP;
		}

	}

}
