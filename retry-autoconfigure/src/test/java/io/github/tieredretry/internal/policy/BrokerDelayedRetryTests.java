package io.github.tieredretry.internal.policy;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.tieredretry.policy.EffectiveRetryPolicy;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link BrokerDelayedRetry}: queue arguments read as RabbitMQ 4.3.6 reads
 * them, and the delays they make.
 */
class BrokerDelayedRetryTests {

	@Test
	void delaysGrowWithTheFailedDeliveriesUpToTheMaximum() {
		BrokerDelayedRetry retry = BrokerDelayedRetry.fromQueueArguments(
				Map.of("x-delayed-retry-type", "failed", "x-delayed-retry-min", 200, "x-delayed-retry-max", 1000));

		// Measured on 4.3.6 for 8 rejects: 0.20 0.40 0.60 0.80 1.00 1.00 1.00 1.00 s.
		assertThat(retry.delays(8)).containsExactly(Duration.ofMillis(200), Duration.ofMillis(400),
				Duration.ofMillis(600), Duration.ofMillis(800), Duration.ofSeconds(1), Duration.ofSeconds(1),
				Duration.ofSeconds(1), Duration.ofSeconds(1));
		// A nack leaves the count at 0, delayed by the minimum.
		assertThat(retry.delayAfter(0)).isEqualTo(Duration.ofMillis(200));
		assertThat(retry.delaysRejects()).isTrue();
	}

	@Test
	void argumentsTheBrokerDoesNotUnderstandLeaveDelayedRetryDisabled() {
		assertThat(BrokerDelayedRetry.fromQueueArguments(Map.of()).type()).isEqualTo(BrokerDelayedRetry.Type.DISABLED);
		assertThat(BrokerDelayedRetry
			.fromQueueArguments(Map.of("x-delayed-retry-type", "bogus", "x-delayed-retry-min", 500))
			.type()).isEqualTo(BrokerDelayedRetry.Type.DISABLED);
		assertThat(BrokerDelayedRetry
			.fromQueueArguments(Map.of("x-delayed-retry-type", "failed", "x-delayed-retry-min", 0))
			.type()).isEqualTo(BrokerDelayedRetry.Type.DISABLED);
		assertThat(BrokerDelayedRetry
			.fromQueueArguments(Map.of("x-delayed-retry-type", "failed", "x-delayed-retry-min", "500"))
			.type()).isEqualTo(BrokerDelayedRetry.Type.DISABLED);
	}

	@Test
	void aMissingOrUnusableMaximumIsTheMinimum() {
		assertThat(
				BrokerDelayedRetry.fromQueueArguments(Map.of("x-delayed-retry-type", "all", "x-delayed-retry-min", 300))
					.delays(3))
			.containsOnly(Duration.ofMillis(300));
		assertThat(BrokerDelayedRetry
			.fromQueueArguments(
					Map.of("x-delayed-retry-type", "all", "x-delayed-retry-min", 300, "x-delayed-retry-max", "2000"))
			.delays(3)).containsOnly(Duration.ofMillis(300));
	}

	@Test
	void onlyTypesThatDelayARejectCanHoldARetry() {
		assertThat(BrokerDelayedRetry
			.fromQueueArguments(Map.of("x-delayed-retry-type", "returned", "x-delayed-retry-min", 300))
			.delaysRejects()).isFalse();
		assertThat(
				BrokerDelayedRetry.fromQueueArguments(Map.of("x-delayed-retry-type", "all", "x-delayed-retry-min", 300))
					.delaysRejects())
			.isTrue();
	}

	@Test
	void aPolicyWithLinearDelaysHasTheConfigurationThatProducesThem() {
		BrokerDelayedRetry retry = BrokerDelayedRetry
			.producing(policy(5, Duration.ofSeconds(2), Duration.ofSeconds(4), Duration.ofSeconds(6)));

		assertThat(retry).isNotNull();
		assertThat(retry.queueArguments()).containsEntry("x-delayed-retry-type", "failed")
			.containsEntry("x-delayed-retry-min", 2000)
			.containsEntry("x-delayed-retry-max", 6000);
	}

	@Test
	void aSingleFixedDelayIsLinearAndTheDefaultExponentialBackOffIsNot() {
		assertThat(BrokerDelayedRetry.producing(policy(4, Duration.ofSeconds(5)))).isNotNull();
		EffectiveRetryPolicy exponential = new EffectiveRetryPolicy(3, List.of(), Duration.ofSeconds(1), 2.0,
				Duration.ofHours(1), 0, null, List.of(), List.of());
		assertThat(BrokerDelayedRetry.producing(exponential)).isNull();
		assertThat(BrokerDelayedRetry.producing(policy(3, Duration.ofSeconds(1), Duration.ofSeconds(5)))).isNull();
	}

	private static EffectiveRetryPolicy policy(int maxRetries, Duration... delays) {
		return new EffectiveRetryPolicy(maxRetries, List.of(delays), Duration.ofSeconds(1), 2.0, Duration.ofHours(1), 0,
				null, List.of(), List.of());
	}

}
