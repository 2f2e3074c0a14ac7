package io.github.tieredretry.listener;

import java.time.Duration;
import java.time.Instant;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.Messages;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.ScriptedListener;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A delay that is not a sum of tiers is composed of them: never early, late by at most
 * the smallest tier plus the broker's latency of the last hop. With tiers 230ms and
 * 4700ms, a 5200ms delay goes 4700ms and then 230ms hops until less than 230ms is left
 * (4700ms + 3 × 230ms = 5390ms when the broker adds no latency); rounding the rest up to
 * the next tier, as before, waited 4700ms twice (9400ms).
 */
@SpringBootTest
@RabbitIntegrationTest
class DelayCompositionIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("composition");

	static final String QUEUE = queues.name("work");

	static final String PARKING_LOT = queues.name("parking");

	static final String SHORT_TIER = queues.owned("retry.delay.230ms");

	static final String LONG_TIER = queues.owned("retry.delay.4700ms");

	static final Duration SMALLEST_TIER = Duration.ofMillis(230);

	/** The broker's latency of one hop, allowed for a busy machine. */
	static final Duration LAST_HOP_LATENCY = Duration.ofSeconds(1);

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add("test.queue", () -> QUEUE);
		registry.add("retry.parking-lot", () -> PARKING_LOT);
		registry.add("retry.queue-type", () -> "quorum");
		registry.add("retry.tiers", () -> "230ms, 4700ms");
		registry.add("retry.defaults.max-retries", () -> "1");
		registry.add("retry.defaults.delays", () -> "5200ms");
	}

	@Autowired
	InvocationRecorder recorder;

	@Test
	void delayThatIsNotASumOfTiersIsNeverEarlyAndLateByAtMostAboutTheSmallestTier() {
		String id = Messages.publish(queues.broker(), "", QUEUE, "fail:1");
		await().atMost(Duration.ofSeconds(20)).until(() -> this.recorder.succeeded(id));
		assertThat(this.recorder.gaps(id)).singleElement()
			.satisfies((gap) -> assertThat(gap).isGreaterThanOrEqualTo(Duration.ofMillis(5200)));
		InvocationRecorder.Invocation retry = this.recorder.of(id).get(1);
		// Composed, not rounded up to the next tier (4700ms twice): the wait ends with a
		// hop through the smallest tier.
		assertThat(retry.header(RetryHeaders.TIER)).isEqualTo("230ms");
		Instant due = Instant.ofEpochMilli(Long.parseLong(String.valueOf(retry.header(RetryHeaders.DUE))));
		Duration late = Duration.between(due, retry.at());
		assertThat(late).as("late after its due time").isGreaterThanOrEqualTo(Duration.ZERO);
		// Each hop is chosen from what is left to wait when it starts, so the latency of
		// the earlier hops is made up by the later ones: late by at most the smallest
		// tier plus the latency of the last hop (publish and confirm, expiry,
		// dead-lettering, delivery), for which 1 s is allowed on a busy machine.
		assertThat(late).as("late after its due time").isLessThanOrEqualTo(SMALLEST_TIER.plus(LAST_HOP_LATENCY));
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@Bean
		InvocationRecorder invocationRecorder() {
			return new InvocationRecorder();
		}

		@Bean
		Queue workQueue() {
			return new Queue(QUEUE);
		}

		@Bean
		Listener listener(InvocationRecorder recorder) {
			return new Listener(recorder);
		}

	}

	static class Listener extends ScriptedListener {

		Listener(InvocationRecorder recorder) {
			super(recorder);
		}

		@RabbitListener(queues = "${test.queue}")
		@RetryableListener
		void onMessage(Message message) {
			run(message);
		}

	}

}
