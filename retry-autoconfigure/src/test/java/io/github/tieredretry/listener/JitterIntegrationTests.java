package io.github.tieredretry.listener;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.tieredretry.event.RetryScheduledEvent;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.metrics.RetryEventMetrics;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.InvocationRecorder.Invocation;
import io.github.tieredretry.testsupport.Messages;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.ScheduledRetries;
import io.github.tieredretry.testsupport.ScriptedApplication;
import io.github.tieredretry.testsupport.TestQueues;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Jitter against a real broker: 500 messages that fail together, with a 4 s delay and
 * jitter 0.5 over tiers of 1 s (1001 ms, a tier name of this class's own), come back
 * spread over the drawn delays (2 s to 6 s), not in one wave, and none before its drawn
 * delay; headers, events and metrics report the drawn delay.
 */
@SpringBootTest(classes = { ScriptedApplication.class, SimpleMeterRegistry.class })
@RabbitIntegrationTest
class JitterIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("jitter")
		.settings((settings) -> settings.quorumTiers("1001ms")
			.retries(1, "4s")
			.set("retry.defaults.jitter", 0.5)
			// Stopped until the test has published every message.
			.set("test.auto-startup", false));

	static final String QUEUE = queues.name("work");

	static final int MESSAGES = 500;

	@Autowired
	InvocationRecorder recorder;

	@Autowired
	RabbitListenerEndpointRegistry listeners;

	@Autowired
	ScheduledRetries scheduled;

	@Autowired
	MeterRegistry meters;

	@Test
	void retriesOfMessagesThatFailTogetherAreSpreadOverTheDrawnDelaysAndNeverEarly() {
		// Published while the listener is stopped, so that all of them fail at once.
		List<String> ids = new ArrayList<>();
		for (int i = 0; i < MESSAGES; i++) {
			ids.add(Messages.publish(queues.broker(), "", QUEUE, "fail:1"));
		}
		this.listeners.getListenerContainer(ScriptedApplication.LISTENER_ID).start();
		await().atMost(Duration.ofSeconds(120))
			.pollInterval(Duration.ofMillis(200))
			.until(() -> ids.stream().allMatch(this.recorder::succeeded));
		// Events are published after the ack, on the starter's event thread.
		await().atMost(Duration.ofSeconds(10)).until(() -> this.scheduled.messages() == MESSAGES);

		List<Instant> failures = new ArrayList<>();
		List<Instant> arrivals = new ArrayList<>();
		List<Duration> waits = new ArrayList<>();
		for (String id : ids) {
			List<Invocation> invocations = this.recorder.of(id);
			assertThat(invocations).as(id).hasSize(2);
			Invocation failure = invocations.get(0);
			Invocation retry = invocations.get(1);
			long due = ((Number) retry.header(RetryHeaders.DUE)).longValue();
			long firstFailure = ((Number) retry.header(RetryHeaders.FIRST_FAILURE)).longValue();
			// The drawn delay, as the header says: within 4 s ± 50%.
			assertThat(Duration.ofMillis(due - firstFailure)).as(id)
				.isBetween(Duration.ofSeconds(2), Duration.ofSeconds(6));
			// Never early against the drawn delay, so never within 2 s of the failure.
			assertThat(retry.at().toEpochMilli()).as(id).isGreaterThanOrEqualTo(due);
			assertThat(Duration.between(failure.at(), retry.at())).as(id).isGreaterThanOrEqualTo(Duration.ofSeconds(2));
			RetryScheduledEvent event = this.scheduled.first(id);
			assertThat(event.due().toEpochMilli()).as(id).isEqualTo(due);
			assertThat(event.delay()).as(id).isEqualTo(Duration.ofMillis(due - firstFailure));
			failures.add(failure.at());
			arrivals.add(retry.at());
			waits.add(Duration.between(failure.at(), retry.at()));
		}
		Duration failed = spreadOf(failures);
		Duration spread = spreadOf(arrivals);
		Duration busiest = Duration.ofMillis(500);
		int peak = mostWithin(arrivals, busiest);
		System.out.printf(
				"Jitter: %d failures within %d ms; retries after %d to %d ms, arriving over %d ms; "
						+ "at most %d in %d ms%n",
				MESSAGES, failed.toMillis(), Collections.min(waits).toMillis(), Collections.max(waits).toMillis(),
				spread.toMillis(), peak, busiest.toMillis());
		// Not one wave: the retries of messages that failed together arrive over at
		// least 3 s, whatever the spread of their failures...
		assertThat(rangeOf(waits)).isGreaterThanOrEqualTo(Duration.ofSeconds(3));
		assertThat(spread).isGreaterThanOrEqualTo(Duration.ofSeconds(3));
		// ... and no half second holds half of them: about a quarter come each second.
		assertThat(peak).isLessThan(MESSAGES / 2);
		// The metric records the same drawn delays.
		Timer delays = this.meters.get(RetryEventMetrics.DELAY).tag("queue", QUEUE).timer();
		await().atMost(Duration.ofSeconds(10)).until(() -> delays.count() == MESSAGES);
		long drawn = ids.stream().mapToLong((id) -> this.scheduled.first(id).delay().toMillis()).sum();
		assertThat(delays.totalTime(TimeUnit.MILLISECONDS)).isEqualTo((double) drawn);
	}

	// From the first to the last.
	private static Duration spreadOf(List<Instant> instants) {
		List<Instant> sorted = instants.stream().sorted().toList();
		return Duration.between(sorted.get(0), sorted.get(sorted.size() - 1));
	}

	// From the shortest to the longest.
	private static Duration rangeOf(List<Duration> durations) {
		List<Duration> sorted = durations.stream().sorted().toList();
		return sorted.get(sorted.size() - 1).minus(sorted.get(0));
	}

	// The most arrivals within any window of the given length.
	private static int mostWithin(List<Instant> arrivals, Duration window) {
		List<Instant> sorted = arrivals.stream().sorted().toList();
		int most = 0;
		int start = 0;
		for (int end = 0; end < sorted.size(); end++) {
			while (Duration.between(sorted.get(start), sorted.get(end)).compareTo(window) >= 0) {
				start++;
			}
			most = Math.max(most, end - start + 1);
		}
		return most;
	}

}
