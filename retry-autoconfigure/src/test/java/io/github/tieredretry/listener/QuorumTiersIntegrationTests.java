package io.github.tieredretry.listener;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.testsupport.BrokerClient;
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
 * Quorum tiers and parking lot: at-least-once dead-lettering from the tiers.
 * <p>
 * The tier durations are used by no other test: a classic queue of the same name on the
 * shared broker would conflict.
 */
@SpringBootTest(classes = ScriptedApplication.class)
@RabbitIntegrationTest
class QuorumTiersIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("quorum")
		.settings((settings) -> settings.quorumTiers("310ms, 730ms").retries(2, "310ms, 730ms"));

	static final String QUEUE = queues.name("work");

	static final String TIER = "retry.delay.310ms";

	@Autowired
	InvocationRecorder recorder;

	@Test
	void tiersAreQuorumQueuesWithAtLeastOnceDeadLetteringAndTheParkingLotIsAQuorumQueue() {
		Map<String, Object> tier = new LinkedHashMap<>();
		tier.put("x-message-ttl", 310);
		tier.put("x-dead-letter-exchange", "retry.return");
		tier.put("x-queue-type", "quorum");
		tier.put("x-dead-letter-strategy", "at-least-once");
		tier.put("x-overflow", "reject-publish");
		assertThat(queues.broker().declaresEquivalently(TIER, tier)).isTrue();
		// A delivery limit no peek can exhaust: RabbitMQ 4 would otherwise drop a parked
		// message after 20.
		assertThat(queues.broker()
			.declaresEquivalently(queues.parkingLotName(),
					Map.of("x-queue-type", "quorum", "x-delivery-limit", Integer.MAX_VALUE)))
			.isTrue();
		assertThat(queues.broker().declaresEquivalently(queues.parkingLotName(), Map.of("x-queue-type", "classic")))
			.isFalse();
	}

	@Test
	void messageIsRetriedThroughQuorumTiersUntilItSucceeds() {
		String id = Messages.publish(queues.broker(), "", QUEUE, "fail:2");
		await().atMost(Duration.ofSeconds(15)).until(() -> this.recorder.succeeded(id));
		assertThat(this.recorder.retryCounts(id)).containsExactly(0L, 1L, 2L);
		assertThat(this.recorder.gaps(id).get(0)).isGreaterThanOrEqualTo(Duration.ofMillis(310));
		assertThat(this.recorder.gaps(id).get(1)).isGreaterThanOrEqualTo(Duration.ofMillis(730));
	}

	@Test
	void exhaustedMessageIsParkedInTheQuorumParkingLot() {
		String id = Messages.publish(queues.broker(), "", QUEUE, "always");
		BrokerClient.Received parked = queues.parkingLot().awaitParked(id, Duration.ofSeconds(15));
		assertThat(parked.header(RetryHeaders.PARKED_REASON)).isEqualTo("exhausted");
		assertThat(parked.bodyText()).isEqualTo("always");
		assertThat(this.recorder.count(id)).isEqualTo(3);
	}

}
