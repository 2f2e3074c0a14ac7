package io.github.tieredretry.listener;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.event.RetryScheduledEvent;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.policy.RetryAfter;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.Messages;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.RecordingApplication;
import io.github.tieredretry.testsupport.ScheduledRetries;
import io.github.tieredretry.testsupport.ScriptedListener;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.annotation.DirtiesContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Delays a failure chooses ({@link RetryAfter}) on the tiers, over AMQP 0-9-1: a
 * {@code RetryAfterException} the listener throws, and an application's own exception
 * that a {@link RetryAfterResolver} bean reads (a rate limit's reset time). The chosen
 * delay replaces the policy's for that retry, still counts as one, is served never early,
 * shows in {@code retry-due} and the event; cut to the policy's longest delay, and parked
 * as {@code timeout} where it would pass the policy's timeout.
 */
@SpringBootTest(classes = { RecordingApplication.class, RetryAfterIntegrationTests.RateLimitResets.class,
		RetryAfterIntegrationTests.Listeners.class })
@RabbitIntegrationTest
@DirtiesContext
class RetryAfterIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("retry-after");

	static final TestQueues.Topology topology = queues.topology();

	static final String WORK = queues.name("work");

	static final String LIMITED = queues.name("limited");

	static final String TIMED = queues.name("timed");

	static {
		queues.settings((settings) -> settings.topology(topology)
			.retries(3, topology.tiers())
			// Retries IllegalStateException only: a RetryAfterException is retried
			// anyway.
			.set("retry.defaults.retry-on", IllegalStateException.class.getName())
			.set("retry.policies.timed.timeout", "1s"));
	}

	@Autowired
	InvocationRecorder recorder;

	@Autowired
	ScheduledRetries scheduled;

	@Test
	void aListenerThatSaysWhenIsRetriedThenEvenWhereRetryOnDoesNotListItsException() {
		String id = Messages.publish(queues.broker(), "", WORK, "retry-after:1700");

		await().atMost(Duration.ofSeconds(20)).until(() -> this.recorder.succeeded(id));
		assertThat(this.recorder.retryCounts(id)).containsExactly(0L, 1L, 2L);
		List<RetryScheduledEvent> retries = this.scheduled.of(id);
		assertThat(retries).extracting(RetryScheduledEvent::delay)
			.containsExactly(Duration.ofMillis(1700), topology.longTier());
		InvocationRecorder.Invocation retry = this.recorder.of(id).get(1);
		assertThat(retry.at()).isAfterOrEqualTo(retries.get(0).due());
		assertThat(retry.header(RetryHeaders.DUE)).isInstanceOfSatisfying(Number.class,
				(due) -> assertThat(due.longValue()).isEqualTo(retries.get(0).due().toEpochMilli()));
		assertThat(retry.header(RetryHeaders.EXCEPTION)).isEqualTo("io.github.tieredretry.policy.RetryAfterException");
	}

	@Test
	void aResolverReadsTheResetTimeOfARateLimitFromTheApplicationsOwnException() {
		Instant reset = Instant.ofEpochMilli(System.currentTimeMillis() + 1500);
		String id = Messages.publish(queues.broker(), "", LIMITED, String.valueOf(reset.toEpochMilli()));

		await().atMost(Duration.ofSeconds(20)).until(() -> this.recorder.succeeded(id));
		assertThat(this.recorder.retryCounts(id)).containsExactly(0L, 1L);
		assertThat(this.scheduled.first(id).due()).isEqualTo(reset);
		assertThat(this.recorder.of(id).get(1).at()).isAfterOrEqualTo(reset);
	}

	@Test
	void aChosenDelayLongerThanThePolicyAllowsIsCutToItsLongestDelay() {
		String id = Messages.publish(queues.broker(), "", WORK, "retry-after:600000");

		await().atMost(Duration.ofSeconds(30)).until(() -> this.recorder.succeeded(id));
		assertThat(this.scheduled.first(id).delay()).isEqualTo(topology.longTier());
	}

	@Test
	void aChosenDelayPastThePolicysTimeoutParksTheMessageAsTimedOut() {
		String id = Messages.publish(queues.broker(), "", TIMED, "retry-after:2000");

		await().atMost(Duration.ofSeconds(10)).until(() -> queues.parkingLot(topology.parkingLot()).contains(id));
		assertThat(queues.parkingLot(topology.parkingLot()).single(id).header(RetryHeaders.PARKED_REASON))
			.isEqualTo("timeout");
		assertThat(this.recorder.count(id)).isOne();
		assertThat(this.scheduled.of(id)).isEmpty();
	}

	/** An application's own exception: the reset time of the rate limit it ran into. */
	static class RateLimitedException extends RuntimeException {

		final Instant reset;

		RateLimitedException(Instant reset) {
			super("rate limited until " + reset);
			this.reset = reset;
		}

	}

	/** Reads the reset time of the application's own exception. */
	@Configuration(proxyBeanMethods = false)
	static class RateLimitResets {

		@Bean
		RetryAfterResolver rateLimitResets() {
			return (listener, failure) -> (failure instanceof RateLimitedException limited)
					? RetryAfter.at(limited.reset) : null;
		}

	}

	static class Listeners extends ScriptedListener {

		Listeners(InvocationRecorder recorder) {
			super(recorder);
		}

		@RabbitListener(queuesToDeclare = @Queue("${test.queues.work}"))
		@RetryableListener
		void onWork(Message message) {
			run(message);
		}

		@RabbitListener(queuesToDeclare = @Queue("${test.queues.timed}"))
		@RetryableListener(policy = "timed")
		void onTimed(Message message) {
			run(message);
		}

		// The body is the rate limit's reset time: limited on the first attempt only.
		@RabbitListener(queuesToDeclare = @Queue("${test.queues.limited}"))
		@RetryableListener(retryOn = RateLimitedException.class)
		void onLimited(Message message) {
			boolean first = this.recorder.count(message.getMessageProperties().getMessageId()) == 0;
			this.recorder.record(message, !first);
			if (first) {
				throw new RateLimitedException(
						Instant.ofEpochMilli(Long.parseLong(new String(message.getBody(), StandardCharsets.UTF_8))));
			}
		}

	}

}
