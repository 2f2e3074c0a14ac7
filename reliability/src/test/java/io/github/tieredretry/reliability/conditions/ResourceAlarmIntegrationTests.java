package io.github.tieredretry.reliability.conditions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeoutException;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import io.github.tieredretry.event.ForwardFailedEvent;
import io.github.tieredretry.event.MessageParkedEvent;
import io.github.tieredretry.event.PublisherBlockedEvent;
import io.github.tieredretry.event.PublisherUnblockedEvent;
import io.github.tieredretry.internal.actuate.RetryHealthIndicator;
import io.github.tieredretry.internal.forwarding.PublisherBlockedState;
import io.github.tieredretry.internal.metrics.PublisherBlockedMetrics;
import io.github.tieredretry.testbrokers.HarnessBroker;
import io.micrometer.core.instrument.MeterRegistry;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A broker memory alarm while a retryable listener works through a backlog (issue #9):
 * RabbitMQ stops reading every connection that publishes, so no failed message can be
 * forwarded. Healthy messages must keep flowing, failed ones must wait (held, or back in
 * their queue without a hot loop), no forward may be tried only to time out, and once the
 * alarm clears every message is processed and none parked. Meanwhile the health stays
 * {@code UP} with the blocked publisher as a detail, gauge
 * {@code rabbitmq.retry.publisher.blocked} is 1, and the failed messages that go back to
 * their queue go back with {@code basic.nack(requeue=true)}, never {@code basic.reject}.
 * <p>
 * A backlog is processed without the alarm, then another during it; the healthy messages'
 * rate of both runs is printed (a figure of this harness, not asserted;
 * {@code -Dreliability.alarm.rounds=5} repeats both runs and prints the median ratio). On
 * a node of its own: an alarm is node-wide.
 */
class ResourceAlarmIntegrationTests {

	static final String WORK = "alarm.orders";

	static final int BACKLOG = 10_000;

	/** Every tenth message fails once. */
	static final int FAILING_EVERY = 10;

	/**
	 * Rounds of both runs; the median rate ratio is printed.
	 * {@code -Dreliability.alarm.rounds=5} for the docs.
	 */
	static final int ROUNDS = Integer.getInteger("reliability.alarm.rounds", 1);

	@Test
	void healthyMessagesKeepFlowingDuringAMemoryAlarmAndFailedOnesAreForwardedWhenItClears() throws Exception {
		HarnessBroker broker = ConditionsBroker.get();
		String vhost = ConditionsBroker.newVirtualHost("alarm");
		Map<String, Object> properties = Map.of("test.work", WORK, "retry.queue-type", "quorum", "retry.parking-lot",
				"alarm.parking-lot", "retry.tiers", "1s", "retry.defaults.max-retries", 1, "retry.defaults.delays",
				"1s");
		try (HarnessApplication app = HarnessApplication.start(broker, vhost, properties);
				Connection connection = broker.connect(vhost, "alarm-test")) {
			Channel channel = connection.createChannel();
			channel.confirmSelect();

			PublisherBlockedState publisher = app.bean(PublisherBlockedState.class);
			List<Double> ratios = new ArrayList<>();
			for (int round = 1; round <= ROUNDS; round++) {
				Backlog calm = Backlog.publish(channel, app, "calm-" + round);
				Duration calmHealthy = calm.timeToProcessTheHealthyOnes(app);
				await().atMost(Duration.ofSeconds(60)).until(() -> calm.allProcessed(app));

				Backlog alarmed = Backlog.publish(channel, app, "alarmed-" + round);
				Duration alarmedHealthy;
				long nacksBefore = app.frames().requeueingNacks();
				broker.ctl("set_vm_memory_high_watermark", "0.00001").requireSuccess();
				try {
					alarmedHealthy = alarmed.timeToProcessTheHealthyOnes(app);
					// Still in the alarm: the forwards wait, none was tried only to fail,
					// nothing was parked.
					assertThat(publisher.isBlocked()).isTrue();
					assertThat(app.events().of(PublisherBlockedEvent.class)).hasSize(round);
					assertThat(blockedGauge(app)).as(PublisherBlockedMetrics.BLOCKED).isEqualTo(1.0);
					assertThat(retryHealth(app).getStatus()).isEqualTo(Status.UP);
					assertThat(retryHealth(app).getDetails())
						.extractingByKey("publisher", InstanceOfAssertFactories.MAP)
						.containsEntry("state", "blocked");
					assertThat(app.events().of(ForwardFailedEvent.class)).isEmpty();
					assertThat(alarmed.failingOnes()).allSatisfy(
							(id) -> assertThat(app.deliveries().count(id)).as("attempts of %s during the alarm", id)
								.isLessThanOrEqualTo(8));
					// More failed messages than a consumer holds: the others went back to
					// their queue, with a requeueing nack.
					assertThat(app.frames().requeueingNacks()).as("requeueing nacks during the alarm")
						.isGreaterThan(nacksBefore);
					assertThat(app.frames().rejects()).as("rejects").isZero();
				}
				finally {
					broker.ctl("set_vm_memory_high_watermark", "0.4").requireSuccess();
				}
				await().atMost(Duration.ofSeconds(60)).until(() -> alarmed.allProcessed(app));
				await().atMost(Duration.ofSeconds(10)).until(() -> !publisher.isBlocked());
				assertThat(app.events().of(PublisherUnblockedEvent.class)).hasSize(round);
				assertThat(blockedGauge(app)).as(PublisherBlockedMetrics.BLOCKED).isZero();
				assertThat(retryHealth(app).getStatus()).isEqualTo(Status.UP);
				assertThat(retryHealth(app).getDetails()).extractingByKey("publisher", InstanceOfAssertFactories.MAP)
					.containsEntry("state", "running");
				ratios.add((double) calmHealthy.toNanos() / alarmedHealthy.toNanos());
				System.out.printf(
						"[resource alarm] round %d: %d healthy messages in %d ms without the alarm, %d ms "
								+ "during it%n",
						round, alarmed.healthyOnes().size(), calmHealthy.toMillis(), alarmedHealthy.toMillis());
			}
			assertThat(app.events().of(PublisherBlockedEvent.class)).hasSize(ROUNDS);
			assertThat(app.events().of(PublisherUnblockedEvent.class)).hasSize(ROUNDS);
			assertThat(app.events().of(MessageParkedEvent.class)).isEmpty();
			assertThat(app.events().of(ForwardFailedEvent.class)).isEmpty();
			assertThat(channel.messageCount("alarm.parking-lot")).isZero();
			assertThat(app.frames().rejects()).as("rejects").isZero();
			System.out.printf(
					"[resource alarm] healthy rate during the alarm / without it, median of %d rounds: "
							+ "%.2fx (rounds: %s)%n",
					ROUNDS, ratios.stream().sorted().toList().get(ROUNDS / 2), ratios);
		}
	}

	private static double blockedGauge(HarnessApplication app) {
		return app.bean(MeterRegistry.class).get(PublisherBlockedMetrics.BLOCKED).gauge().value();
	}

	private static Health retryHealth(HarnessApplication app) {
		return app.bean(RetryHealthIndicator.class).health(true);
	}

	/**
	 * A backlog published while the listener is stopped: healthy messages and messages
	 * that fail once.
	 */
	private record Backlog(List<String> healthyOnes, List<String> failingOnes) {

		static Backlog publish(Channel channel, HarnessApplication app, String name)
				throws IOException, InterruptedException, TimeoutException {
			app.stopListeners();
			List<String> healthy = new ArrayList<>();
			List<String> failing = new ArrayList<>();
			for (int i = 0; i < BACKLOG; i++) {
				String id = name + "-" + i + "-" + UUID.randomUUID();
				boolean fails = i % FAILING_EVERY == 0;
				(fails ? failing : healthy).add(id);
				channel.basicPublish("", WORK, new AMQP.BasicProperties.Builder().messageId(id).deliveryMode(2).build(),
						(fails ? "fail:1" : "ok").getBytes(StandardCharsets.UTF_8));
			}
			channel.waitForConfirmsOrDie(30_000);
			return new Backlog(healthy, failing);
		}

		Duration timeToProcessTheHealthyOnes(HarnessApplication app) {
			long started = System.nanoTime();
			app.startListeners();
			await().atMost(Duration.ofSeconds(60))
				.until(() -> this.healthyOnes.stream().allMatch((id) -> app.deliveries().succeeded(id)));
			return Duration.ofNanos(System.nanoTime() - started);
		}

		boolean allProcessed(HarnessApplication app) {
			return this.failingOnes.stream().allMatch((id) -> app.deliveries().succeeded(id));
		}

	}

}
