package io.github.tieredretry.internal.metrics;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.Messages;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.TestQueues;
import io.github.tieredretry.testsupport.WorkQueueApplication;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.search.RequiredSearch;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Retry metrics recorded by a running application against the real broker: counters after
 * a known scenario, the recovery timer, and the depth gauges.
 */
@SpringBootTest(classes = WorkQueueApplication.class, webEnvironment = SpringBootTest.WebEnvironment.NONE)
@RabbitIntegrationTest
class RetryMetricsIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("metrics");

	static final String QUEUE = queues.name("work");

	static final String SLOW_QUEUE = queues.name("slow");

	static final String PARKING_LOT = queues.parkingLotName();

	/**
	 * A tier no other test uses: its depth is this class's alone, and messages stay in it
	 * long enough to see.
	 */
	static final String SLOW_TIER_QUEUE = queues.owned(RetryTopology.TIER_QUEUE_PREFIX + "47s");

	static {
		queues.settings((settings) -> settings.classicTiers("200ms, 500ms, 47s")
			.retries(2, "200ms, 500ms")
			.set("test.work", QUEUE)
			.set("test.slow", SLOW_QUEUE)
			.set("retry.policies.slow.delays", "47s")
			.set("retry.policies.slow.max-retries", "1"));
	}

	@Autowired
	MeterRegistry registry;

	@Autowired
	InvocationRecorder recorder;

	BrokerClient broker;

	@BeforeEach
	void openClient() {
		this.broker = queues.broker();
	}

	@Test
	void countersAndTimerDescribeAKnownScenario() {
		List<String> recovering = List.of(Messages.publish(this.broker, "", QUEUE, "fail:2"),
				Messages.publish(this.broker, "", QUEUE, "fail:2"));
		Messages.publish(this.broker, "", QUEUE, "always");
		Messages.publish(this.broker, "", QUEUE, "reject");

		// Each fail:2 message: retried via 200ms, then 500ms, then recovered. The
		// always-failing one: retried via 200ms and 500ms, then parked as exhausted. The
		// rejected one: parked at once as not retryable.
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
			assertThat(recovering).allMatch(this.recorder::succeeded);
			assertThat(count("retried", "200ms", "none", "IllegalStateException")).isEqualTo(3);
			assertThat(count("retried", "500ms", "none", "IllegalStateException")).isEqualTo(3);
			assertThat(count("recovered", "none", "none", "IllegalStateException")).isEqualTo(2);
			assertThat(count("parked", "none", "exhausted", "IllegalStateException")).isEqualTo(1);
			assertThat(count("parked", "none", "not-retryable", "IllegalArgumentException")).isEqualTo(1);
			Timer delay = this.registry.get(RetryEventMetrics.DELAY).tag("queue", QUEUE).timer();
			assertThat(delay.count()).isEqualTo(6);
			assertThat(delay.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(3 * 200 + 3 * 500);
		});
		assertThat(this.registry.get(RetryEventMetrics.MESSAGES).tag("queue", QUEUE).counters()).hasSize(5);
		Timer recovery = this.registry.get(RetryEventMetrics.RECOVERY).tag("queue", QUEUE).timer();
		assertThat(recovery.count()).isEqualTo(2);
		assertThat(recovery.max(TimeUnit.MILLISECONDS)).as("at least both delays").isGreaterThanOrEqualTo(700);
	}

	@Test
	void depthGaugesShowMessagesWaitingInATierAndInTheParkingLot() {
		for (int i = 0; i < 3; i++) {
			Messages.publish(this.broker, "", SLOW_QUEUE, "always");
		}
		Messages.publish(this.broker, "", QUEUE, "reject");

		// Depths are cached for a few seconds: the gauges catch up within that time.
		await().atMost(Duration.ofSeconds(15))
			.untilAsserted(() -> assertThat(depth(SLOW_TIER_QUEUE).value()).isEqualTo(3));
		await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
			long parked = this.broker.count(PARKING_LOT);
			assertThat(parked).isPositive();
			assertThat(depth(PARKING_LOT).value()).isEqualTo(parked);
		});
		assertThat(depth(SLOW_TIER_QUEUE).getId().getTag("type")).isEqualTo("tier");
		assertThat(depth(PARKING_LOT).getId().getTag("type")).isEqualTo("parking-lot");
		assertThat(this.registry.get(RetryQueueDepthMetrics.DEPTH).gauges())
			.extracting((gauge) -> gauge.getId().getTag("queue"))
			.containsExactlyInAnyOrder("retry.delay.200ms", "retry.delay.500ms", SLOW_TIER_QUEUE, PARKING_LOT);
	}

	private double count(String outcome, String tier, String reason, String exception) {
		RequiredSearch search = this.registry.get(RetryEventMetrics.MESSAGES)
			.tags("queue", QUEUE, "outcome", outcome, "tier", tier, "reason", reason, "exception", exception);
		try {
			return search.counter().count();
		}
		catch (io.micrometer.core.instrument.search.MeterNotFoundException ex) {
			return 0;
		}
	}

	private Gauge depth(String queue) {
		return this.registry.get(RetryQueueDepthMetrics.DEPTH).tag("queue", queue).gauge();
	}

}
