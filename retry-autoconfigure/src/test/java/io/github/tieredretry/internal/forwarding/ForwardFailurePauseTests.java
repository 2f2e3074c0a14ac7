package io.github.tieredretry.internal.forwarding;

import java.time.Duration;
import java.util.function.LongSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ForwardFailurePause}.
 */
class ForwardFailurePauseTests {

	@AfterEach
	void clearInterrupt() {
		Thread.interrupted();
	}

	@ParameterizedTest(name = "after {0} failures: {1} ms")
	@CsvSource({ "1, 500", "2, 1000", "3, 2000", "4, 4000", "5, 8000", "6, 15000", "40, 15000", "2147483647, 15000" })
	void pauseStartsAtTheInitialPauseAndDoublesWithEachConsecutiveFailureUpToTheMaximum(int failures, long millis) {
		ForwardFailurePause pause = new ForwardFailurePause(Duration.ofMillis(500), Duration.ofSeconds(15));
		assertThat(pause.pauseMillis(failures)).isEqualTo(millis);
	}

	@Test
	void pauseNeverShrinksAsFailuresGoOn() {
		ForwardFailurePause pause = new ForwardFailurePause(Duration.ofMillis(1), Duration.ofHours(1));
		long previous = 0;
		for (int failures = 1; failures <= 200; failures++) {
			long current = pause.pauseMillis(failures);
			assertThat(current).as("pause after %d failures", failures).isGreaterThanOrEqualTo(previous);
			previous = current;
		}
		assertThat(previous).isEqualTo(Duration.ofHours(1).toMillis());
	}

	@Test
	void hugeInitialPauseDoesNotOverflowIntoAShorterPause() {
		ForwardFailurePause pause = new ForwardFailurePause(Duration.ofMillis(1L << 40),
				Duration.ofMillis(Long.MAX_VALUE));
		for (int failures = 1; failures <= 64; failures++) {
			assertThat(pause.pauseMillis(failures)).as("pause after %d failures", failures)
				.isGreaterThanOrEqualTo(1L << 40);
		}
	}

	@Test
	void maximumShorterThanTheInitialPauseIsRaisedToIt() {
		ForwardFailurePause pause = new ForwardFailurePause(Duration.ofSeconds(2), Duration.ofSeconds(1));
		assertThat(pause.pauseMillis(1)).isEqualTo(2000);
		assertThat(pause.pauseMillis(5)).isEqualTo(2000);
	}

	@Test
	void zeroInitialPauseNeverPauses() {
		ForwardFailurePause pause = new ForwardFailurePause(Duration.ZERO, Duration.ofSeconds(15));
		assertThat(pause.pauseMillis(1)).isZero();
		assertThat(pause.pauseMillis(30)).isZero();
	}

	@Test
	void negativeInitialPauseCountsAsZero() {
		ForwardFailurePause pause = new ForwardFailurePause(Duration.ofMillis(-100), Duration.ofSeconds(1));
		assertThat(pause.pauseMillis(3)).isZero();
	}

	@Test
	void failuresAreCountedUntilAForwardSucceeds() {
		ForwardFailurePause pause = new ForwardFailurePause(Duration.ZERO, Duration.ZERO);
		assertThat(pause.consecutiveFailures()).isZero();
		assertThat(pause.recordFailure()).isZero();
		assertThat(pause.recordFailure()).isZero();
		assertThat(pause.consecutiveFailures()).isEqualTo(2);
		pause.reset();
		assertThat(pause.consecutiveFailures()).isZero();
		pause.reset();
		assertThat(pause.consecutiveFailures()).isZero();
	}

	@Test
	void recordedFailureReportsThePauseItCallsFor() {
		FakeNanoClock clock = new FakeNanoClock();
		ForwardFailurePause pause = new ForwardFailurePause(Duration.ofMillis(500), Duration.ofSeconds(15), clock);
		assertThat(pause.recordFailure()).isEqualTo(500);
		clock.advance(Duration.ofMillis(500));
		assertThat(pause.recordFailure()).isEqualTo(1000);
	}

	@Test
	void failuresDuringThePauseBelongToTheSameEpisodeAndWaitOnlyForItsEnd() {
		// A blip fails every forward in flight at once: one outage, not 25 consecutive
		// failures.
		FakeNanoClock clock = new FakeNanoClock();
		ForwardFailurePause pause = new ForwardFailurePause(Duration.ofMillis(500), Duration.ofSeconds(15), clock);
		assertThat(pause.recordFailure()).isEqualTo(500);
		for (int failure = 2; failure <= 25; failure++) {
			clock.advance(Duration.ofMillis(10));
			assertThat(pause.recordFailure()).as("failure %d", failure).isBetween(1L, 500L);
		}
		assertThat(pause.consecutiveFailures()).isEqualTo(1);
		clock.advance(Duration.ofMillis(300));
		assertThat(pause.recordFailure()).as("a failure after the pause: the next episode").isEqualTo(1000);
		assertThat(pause.consecutiveFailures()).isEqualTo(2);
	}

	@Test
	void successfulForwardEndsTheEpisodesSoThatTheNextFailurePausesBriefly() {
		FakeNanoClock clock = new FakeNanoClock();
		ForwardFailurePause pause = new ForwardFailurePause(Duration.ofMillis(500), Duration.ofSeconds(15), clock);
		for (int episode = 1; episode <= 6; episode++) {
			pause.recordFailure();
			clock.advance(Duration.ofSeconds(16));
		}
		assertThat(pause.recordFailure()).isEqualTo(15_000);
		pause.reset();
		clock.advance(Duration.ofSeconds(16));
		assertThat(pause.recordFailure()).isEqualTo(500);
	}

	/** A nano clock the test moves. */
	static final class FakeNanoClock implements LongSupplier {

		private long nanos = 1_000_000_000L;

		void advance(Duration duration) {
			this.nanos += duration.toNanos();
		}

		@Override
		public long getAsLong() {
			return this.nanos;
		}

	}

	@Test
	void consumerWaitsOnlyWhileThePauseOfTheLastFailureLasts() {
		ForwardFailurePause pause = new ForwardFailurePause(Duration.ofMillis(200), Duration.ofMillis(200));
		long started = System.nanoTime();
		pause.awaitPause();
		assertThat(Duration.ofNanos(System.nanoTime() - started)).as("no failure, no pause")
			.isLessThan(Duration.ofMillis(100));
		pause.recordFailure();
		started = System.nanoTime();
		pause.awaitPause();
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(150));
		pause.reset();
		started = System.nanoTime();
		pause.awaitPause();
		assertThat(Duration.ofNanos(System.nanoTime() - started)).as("reset ends the pause")
			.isLessThan(Duration.ofMillis(100));
	}

	@Test
	void interruptedConsumerIsNotHeldByThePauseAndStaysInterrupted() {
		ForwardFailurePause pause = new ForwardFailurePause(Duration.ofHours(1), Duration.ofHours(1));
		pause.recordFailure();
		Thread.currentThread().interrupt();
		long started = System.nanoTime();
		pause.awaitPause();
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
		assertThat(Thread.currentThread().isInterrupted()).isTrue();
	}

}
