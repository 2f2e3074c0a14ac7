package io.github.tieredretry.internal.delayedsend;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.github.tieredretry.testsupport.MutableClock;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The count of delayed sends per tier: a hop counts from its publish until it comes back
 * here, or until a minute after it was due back (another instance took it).
 */
class ScheduledCountsTests {

	static final Duration SHORT = Duration.ofSeconds(1);

	static final Duration LONG = Duration.ofMinutes(10);

	final MutableClock clock = new MutableClock(Instant.parse("2026-11-28T12:00:00Z"));

	final ScheduledCounts counts = new ScheduledCounts(List.of(SHORT, LONG), this.clock);

	@Test
	void countsAHopUntilItComesBack() {
		Instant now = this.clock.instant();
		String stamp = this.counts.stamp(now);
		this.counts.entered(LONG, now);
		this.counts.entered(LONG, now);

		assertThat(this.counts.byTier()).containsEntry(LONG, 2L).containsEntry(SHORT, 0L);
		this.counts.left(LONG, stamp);
		assertThat(this.counts.total()).isOne();
	}

	@Test
	void anotherInstancesHopDoesNotCountDownThisOnes() {
		Instant now = this.clock.instant();
		this.counts.entered(SHORT, now);

		this.counts.left(SHORT, "another-instance@" + now.toEpochMilli());
		this.counts.left(SHORT, null);

		assertThat(this.counts.total()).isOne();
	}

	@Test
	void aHopThatDidNotComeBackHereStopsCountingAMinuteAfterItWasDue() {
		this.counts.entered(LONG, this.clock.instant());

		this.clock.advance(LONG.plus(ScheduledCounts.GRACE).minusSeconds(1));
		assertThat(this.counts.total()).isOne();
		this.clock.advance(Duration.ofSeconds(2));
		assertThat(this.counts.total()).isZero();
	}

}
