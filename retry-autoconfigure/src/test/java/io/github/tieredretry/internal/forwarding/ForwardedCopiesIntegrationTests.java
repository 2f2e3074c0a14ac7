package io.github.tieredretry.internal.forwarding;

import java.io.IOException;
import java.time.Duration;
import java.util.List;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.Messages;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
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
 * A retry and a parked message made from a delivery that the broker counted returns of
 * carry none of its counts ({@code x-delivery-count}, {@code x-acquired-count}): those
 * describe one delivery of the original, and the copy is a new message (which on RabbitMQ
 * 4.0 to 4.2 must not start with returns spent towards a quorum queue's delivery limit).
 * The tiers and the parking lot are classic queues here, which add no counts of their
 * own, so what a copy carries is what the starter published.
 */
@SpringBootTest(classes = WorkQueueApplication.class)
@RabbitIntegrationTest
class ForwardedCopiesIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("copies");

	static final TestQueues.Topology topology = queues.topology();

	/** A tier of a minute, so that the test reads the retry while it waits there. */
	static final Duration MINUTE_TIER = Duration.ofMillis(60_000 + topology.shortTier().toMillis());

	static final String MINUTE_TIER_QUEUE = queues.owned(RetryTopology.tierQueueName(MINUTE_TIER));

	static final String WORK = queues.name("work");

	static {
		queues.settings((settings) -> settings.parkingLot(topology.parkingLot())
			.classicTiers(MINUTE_TIER.toMillis() + "ms")
			.retries(1, MINUTE_TIER)
			.set("test.work", WORK)
			.set("test.work-queue-type", "quorum")
			.set("test.auto-startup", "false")
			.set("retry.defaults.no-retry-on", IllegalArgumentException.class.getName()));
	}

	@Autowired
	InvocationRecorder recorder;

	@Autowired
	RabbitListenerEndpointRegistry containers;

	@Test
	void retriesAndParkedMessagesCarryNoneOfTheBrokersCountsOfTheDeliveryTheyWereMadeFrom() throws IOException {
		String retried = Messages.publish(queues.broker(), "", WORK, "always");
		String parked = Messages.publish(queues.broker(), "", WORK, "reject");
		// Both given back once before the listener starts, with a reject: every version
		// counts it (x-delivery-count 1; 4.3 also x-acquired-count 1).
		Channel channel = queues.broker().channel();
		List<GetResponse> taken = List.of(channel.basicGet(WORK, false), channel.basicGet(WORK, false));
		for (GetResponse response : taken) {
			channel.basicReject(response.getEnvelope().getDeliveryTag(), true);
		}
		this.containers.getListenerContainer(WorkQueueApplication.WORK).start();

		await().atMost(Duration.ofSeconds(10))
			.until(() -> this.recorder.count(retried) == 1 && this.recorder.count(parked) == 1);
		assertThat(List.of(retried, parked)).as("x-delivery-count of the deliveries the listener failed")
			.allSatisfy((id) -> assertThat(
					String.valueOf(this.recorder.of(id).get(0).header(RetryHeaders.BROKER_DELIVERY_COUNT)))
				.isEqualTo("1"));
		await().atMost(Duration.ofSeconds(10)).until(() -> queues.broker().count(MINUTE_TIER_QUEUE) == 1);
		BrokerClient.Received retry = queues.broker().drain(MINUTE_TIER_QUEUE).get(0);
		assertThat(retry.properties().getMessageId()).isEqualTo(retried);
		assertThat(retry.header(RetryHeaders.COUNT)).isEqualTo("1");
		assertThat(retry.headers()).as("the retry's headers")
			.doesNotContainKeys(RetryHeaders.BROKER_DELIVERY_COUNT, RetryHeaders.BROKER_ACQUIRED_COUNT);
		await().atMost(Duration.ofSeconds(10)).until(() -> queues.parkingLot(topology.parkingLot()).contains(parked));
		BrokerClient.Received parkedCopy = queues.parkingLot(topology.parkingLot()).single(parked);
		assertThat(parkedCopy.header(RetryHeaders.PARKED_REASON)).isEqualTo("not-retryable");
		assertThat(parkedCopy.headers()).as("the parked copy's headers")
			.doesNotContainKeys(RetryHeaders.BROKER_DELIVERY_COUNT, RetryHeaders.BROKER_ACQUIRED_COUNT);
	}

}
