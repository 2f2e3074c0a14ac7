package io.github.tieredretry.listener;

import java.time.Duration;
import java.time.Instant;

import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.Messages;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.ScriptedApplication;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A delay that is not a sum of tiers is composed of them: never early, late by at most
 * the smallest tier plus the broker's latency of the last hop. With tiers 230ms and
 * 4700ms, a 5200ms delay goes 4700ms and then 230ms hops until less than 230ms is left
 * (4700ms + 3 × 230ms = 5390ms when the broker adds no latency); rounding the rest up to
 * the next tier, as before, waited 4700ms twice (9400ms).
 */
@SpringBootTest(classes = ScriptedApplication.class)
@RabbitIntegrationTest
class DelayCompositionIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("composition")
		.settings((settings) -> settings.quorumTiers("230ms, 4700ms").retries(1, "5200ms"));

	static final String QUEUE = queues.name("work");

	static final Duration SMALLEST_TIER = Duration.ofMillis(230);

	/** The broker's latency of one hop, allowed for a busy machine. */
	static final Duration LAST_HOP_LATENCY = Duration.ofSeconds(1);

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

}
