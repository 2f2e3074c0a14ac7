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
		ReplayPacer pacer = new ReplayPacer(4, () -> this.now, this::waitFor);

		for (int i = 0; i < 4; i++) {
			assertThat(pacer.awaitTurn()).isTrue();
		}

		assertThat(this.waits).containsExactly(millis(250), millis(250), millis(250));
	}

	@Test
	void timeSpentPublishingCountsTowardsTheInterval() {
		ReplayPacer pacer = new ReplayPacer(10, () -> this.now, this::waitFor);

		pacer.awaitTurn();
		this.now += millis(30);
		pacer.awaitTurn();

		assertThat(this.waits).containsExactly(millis(70));
	}

	@Test
	void aSlowPublishIsNotMadeUpForByABurst() {
		ReplayPacer pacer = new ReplayPacer(10, () -> this.now, this::waitFor);

		pacer.awaitTurn();
		this.now += millis(1_000);
		pacer.awaitTurn();
		pacer.awaitTurn();

		assertThat(this.waits).containsExactly(millis(100));
	}

	@Test
	void aStopDuringTheWaitEndsIt() {
		ReplayPacer pacer = new ReplayPacer(1, () -> this.now, (nanos) -> true);

		assertThat(pacer.awaitTurn()).isTrue();
		assertThat(pacer.awaitTurn()).isFalse();
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
