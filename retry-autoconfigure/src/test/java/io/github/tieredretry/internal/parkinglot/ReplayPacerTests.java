package io.github.tieredretry.internal.parkinglot;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ReplayPacer}, on a clock that only moves when the pacer waits.
 */
class ReplayPacerTests {

	long now = 1_000;

	final List<Long> waits = new ArrayList<>();

	@Test
	void theFirstPublishGoesAtOnceAndTheNextOnesOneIntervalApart() {
		assertThat(waitsForPublishesTaking(4, 0, 0, 0, 0)).containsExactly(millis(250), millis(250), millis(250));
	}

	@Test
	void timeSpentPublishingCountsTowardsTheInterval() {
		assertThat(waitsForPublishesTaking(10, 30, 0)).containsExactly(millis(70));
	}

	@Test
	void aSlowPublishIsNotMadeUpForByABurst() {
		assertThat(waitsForPublishesTaking(10, 1_000, 0, 0)).containsExactly(millis(100));
	}

	@Test
	void aStopDuringTheWaitEndsIt() {
		ReplayPacer pacer = new ReplayPacer(1, () -> this.now, (nanos) -> true);

		assertThat(pacer.awaitTurn()).isTrue();
		assertThat(pacer.awaitTurn()).isFalse();
	}

	/**
	 * Paces one publish per given duration, each taking that long once its turn came, and
	 * returns the waits the pacer asked for.
	 */
	private List<Long> waitsForPublishesTaking(int perSecond, long... publishMillis) {
		ReplayPacer pacer = new ReplayPacer(perSecond, () -> this.now, this::waitFor);
		for (long publish : publishMillis) {
			assertThat(pacer.awaitTurn()).isTrue();
			this.now += millis(publish);
		}
		return this.waits;
	}

	private boolean waitFor(long nanos) {
		this.waits.add(nanos);
		this.now += nanos;
		return false;
	}

	private static long millis(long millis) {
		return TimeUnit.MILLISECONDS.toNanos(millis);
	}

}
