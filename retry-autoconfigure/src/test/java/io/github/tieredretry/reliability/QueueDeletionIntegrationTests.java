package io.github.tieredretry.reliability;

import java.time.Duration;
import java.util.Map;

import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.headers.HeaderChanges;
import io.github.tieredretry.policy.ParkedReason;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.ParkingLot;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.RetryEvents;
import io.github.tieredretry.testsupport.ScriptHeaderMessages;
import io.github.tieredretry.testsupport.TestQueues;
import io.github.tieredretry.testsupport.WorkQueueApplication;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Queues of the retry topology, or a work queue, deleted (or replaced) while the
 * application runs: forwarding declares what is missing and carries on, or refuses and
 * keeps the message; a retry whose work queue is gone ends in the parking lot.
 */
@SpringBootTest(classes = WorkQueueApplication.class)
@RabbitIntegrationTest
class QueueDeletionIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("deletion");

	static final TestQueues.Topology topology = queues.topology();

	static final String WORK = queues.name("work");

	static final String DOOMED = queues.name("doomed");

	static {
		queues.settings((settings) -> settings.topology(topology)
			.retries(2, topology.shortTier())
			.set("test.work", WORK)
			.set("test.slow", DOOMED)
			.set("retry.policies.slow.delays", topology.longTier().toMillis() + "ms")
			.set("retry.publish.failure-initial-pause", "200ms")
			.set("retry.publish.failure-max-pause", "1s"));
	}

	@Autowired
	InvocationRecorder deliveries;

	@Autowired
	RetryEvents events;

	@Autowired
	RabbitListenerEndpointRegistry endpoints;

	@Test
	void deletedTierQueueIsDeclaredAgainByTheNextForward() {
		queues.broker().deleteQueue(topology.shortTierQueue());

		String id = publish(WORK, "fail-until-retry:1");

		await().atMost(Duration.ofSeconds(10)).until(() -> this.deliveries.successes(id) == 1);
		assertThat(this.deliveries.of(id)).extracting(InvocationRecorder.Invocation::retryCount)
			.containsExactly(0L, 1L);
		assertThat(queues.broker().queueExists(topology.shortTierQueue())).isTrue();
		assertThat(parked().copies(id)).isEmpty();
	}

	@Test
	void deletedParkingLotIsDeclaredAgainBeforeTheNextMessageIsParked() {
		queues.broker().deleteQueue(topology.parkingLot());

		String id = publish(WORK, "reject");

		await().atMost(Duration.ofSeconds(10)).until(() -> parked().contains(id));
		assertThat(parked().single(id).header(RetryHeaders.PARKED_REASON)).isEqualTo("not-retryable");
		assertThat(this.deliveries.count(id)).isOne();
	}

	@Test
	void retryWaitingInATierWhenItsWorkQueueIsDeletedEndsInTheParkingLotAsUnroutable() {
		String id = publish(DOOMED, "always");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.deliveries.count(id) == 1 && this.events.scheduled(id));

		// The application stops consuming the queue and an operator deletes it, retries
		// still waiting.
		this.endpoints.getListenerContainer(WorkQueueApplication.SLOW).stop();
		queues.broker().deleteQueue(DOOMED);

		await().atMost(topology.longTier().plusSeconds(10)).until(() -> parked().contains(id));
		BrokerClient.Received parkedMessage = parked().single(id);
		// The broker parked it (alternate exchange), so no reason header: readers infer
		// 'unroutable'.
		assertThat(parkedMessage.headers()).doesNotContainKey(RetryHeaders.PARKED_REASON);
		assertThat(HeaderChanges.parkedReasonOf(parkedMessage.headers())).isEqualTo(ParkedReason.UNROUTABLE);
		assertThat(parkedMessage.header(RetryHeaders.QUEUE)).isEqualTo(DOOMED);
		assertThat(parkedMessage.header(RetryHeaders.COUNT)).isEqualTo("1");
		assertThat(parkedMessage.headers()).containsKey("x-death");
		assertThat(parkedMessage.bodyText()).isEqualTo("payload");
		assertThat(this.deliveries.count(id)).isOne();
	}

	@Test
	void tierQueueReplacedWithOtherArgumentsMakesForwardsFailWithoutLossAndWithoutAHotLoop() {
		// Somebody deletes the tier and declares it again as another queue type (and
		// without its binding).
		queues.broker().deleteQueue(topology.shortTierQueue());
		queues.broker()
			.declareQueue(topology.shortTierQueue(),
					Map.of("x-queue-type", "quorum", "x-message-ttl", (int) topology.shortTier().toMillis()));
		try {
			String id = publish(WORK, "fail-until-retry:1");
			await().atMost(Duration.ofSeconds(10)).until(() -> this.deliveries.count(id) >= 1);

			// The forward can neither route nor heal the topology: the message must stay
			// in its queue, reported as a failed forward, and the consumer must pause
			// between attempts. Five failed forwards take at least 2.4 s of pauses (0.2 s
			// doubling up to 1 s).
			await().atMost(Duration.ofSeconds(10)).until(() -> this.events.forwardFailuresOf(id) >= 5);
			assertThat(this.deliveries.successes(id)).isZero();
			assertThat(this.deliveries.count(id)).as("listener invocations over five failing forwards")
				.isLessThanOrEqualTo(10);

			queues.broker().deleteQueue(topology.shortTierQueue());
			await().atMost(Duration.ofSeconds(15)).until(() -> this.deliveries.successes(id) == 1);
			assertThat(parked().copies(id)).isEmpty();
		}
		finally {
			queues.broker().deleteQueue(topology.shortTierQueue());
		}
	}

	private String publish(String queue, String script) {
		return ScriptHeaderMessages.publish(queues.broker(), queue, script);
	}

	/** The test's reader of the parking lot. */
	private static ParkingLot parked() {
		return queues.parkingLot(topology.parkingLot());
	}

}
