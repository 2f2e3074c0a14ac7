package io.github.tieredretry.internal.metrics;

import java.time.Duration;
import java.time.Instant;

import io.github.tieredretry.event.ForwardFailedEvent;
import io.github.tieredretry.event.MessageParkedEvent;
import io.github.tieredretry.event.MessageRecoveredEvent;
import io.github.tieredretry.event.RetryScheduledEvent;
import io.github.tieredretry.policy.ParkedReason;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RetryEventMetrics}.
 */
class RetryEventMetricsTests {

	MeterRegistry registry = new SimpleMeterRegistry();

	RetryEventMetrics metrics = new RetryEventMetrics(this.registry);

	@Test
	void aScheduledRetryIsCountedWithItsTier() {
		this.metrics.onRetryScheduled(new RetryScheduledEvent("orders", 1, "10s", Duration.ofSeconds(10), Instant.now(),
				"com.acme.PaymentDeclinedException", "m-1"));

		assertThat(count("orders", "retried", "10s", "none", "PaymentDeclinedException")).isEqualTo(1);
	}

	@Test
	void theDrawnDelayOfEachScheduledRetryIsTimed() {
		this.metrics.onRetryScheduled(new RetryScheduledEvent("orders", 1, "1s", Duration.ofMillis(3400), Instant.now(),
				"java.io.IOException", "m-1"));
		this.metrics.onRetryScheduled(new RetryScheduledEvent("orders", 1, "1s", Duration.ofMillis(4600), Instant.now(),
				"java.io.IOException", "m-2"));

		Timer timer = this.registry.get(RetryEventMetrics.DELAY).tag("queue", "orders").timer();
		assertThat(timer.count()).isEqualTo(2);
		assertThat(timer.totalTime(java.util.concurrent.TimeUnit.MILLISECONDS)).isEqualTo(8000);
		assertThat(timer.max(java.util.concurrent.TimeUnit.MILLISECONDS)).isEqualTo(4600);
		assertThat(timer.getId().getDescription()).isNotBlank();
	}

	@Test
	void aParkedMessageIsCountedWithItsReason() {
		this.metrics.onMessageParked(new MessageParkedEvent("orders", 0, ParkedReason.NOT_RETRYABLE,
				"org.springframework.amqp.support.converter.MessageConversionException", null));

		assertThat(count("orders", "parked", "none", "not-retryable", "MessageConversionException")).isEqualTo(1);
	}

	@Test
	void aRecoveredMessageIsCountedAndItsRecoveryTimed() {
		this.metrics.onMessageRecovered(
				new MessageRecoveredEvent("orders", 2, Duration.ofMillis(1500), "java.io.IOException", "m-1"));
		this.metrics.onMessageRecovered(
				new MessageRecoveredEvent("orders", 1, Duration.ofMillis(500), "java.io.IOException", "m-2"));

		assertThat(count("orders", "recovered", "none", "none", "IOException")).isEqualTo(2);
		Timer timer = this.registry.get(RetryEventMetrics.RECOVERY).tag("queue", "orders").timer();
		assertThat(timer.count()).isEqualTo(2);
		assertThat(timer.totalTime(java.util.concurrent.TimeUnit.MILLISECONDS)).isEqualTo(2000);
		assertThat(timer.getId().getDescription()).isNotBlank();
	}

	@Test
	void aFailedForwardIsCountedWithTheTierItWasFor() {
		this.metrics.onForwardFailed(
				new ForwardFailedEvent("orders", 0, "retry.delay.1m", "java.io.IOException", "nacked", null));
		this.metrics.onForwardFailed(
				new ForwardFailedEvent("orders", 5, "retry.parking-lot", "java.io.IOException", "timed out", null));

		assertThat(count("orders", "forward-failed", "1m", "none", "IOException")).isEqualTo(1);
		assertThat(count("orders", "forward-failed", "none", "none", "IOException")).isEqualTo(1);
	}

	@Test
	void everyCounterHasTheSameTagKeysAndADescription() {
		this.metrics.onRetryScheduled(new RetryScheduledEvent("orders", 1, "10s", Duration.ofSeconds(10), Instant.now(),
				"java.io.IOException", null));
		this.metrics.onMessageParked(new MessageParkedEvent("orders", 3, ParkedReason.EXHAUSTED, "", null));

		assertThat(this.registry.get(RetryEventMetrics.MESSAGES).meters()).hasSize(2).allSatisfy((meter) -> {
			assertThat(meter.getId().getTags()).extracting((tag) -> tag.getKey())
				.containsExactlyInAnyOrder("queue", "outcome", "tier", "reason", "exception");
			assertThat(meter.getId().getDescription()).isNotBlank();
			assertThat(meter.getId().getType()).isEqualTo(Meter.Type.COUNTER);
		});
	}

	@Test
	void exceptionTagsAreSimpleNames() {
		assertThat(RetryEventMetrics.simpleName("com.acme.Payments$DeclinedException")).isEqualTo("DeclinedException");
		assertThat(RetryEventMetrics.simpleName("com.acme.Payments$1")).isEqualTo("Payments$1");
		assertThat(RetryEventMetrics.simpleName("IOException")).isEqualTo("IOException");
		assertThat(RetryEventMetrics.simpleName("")).isEqualTo("none");
	}

	private double count(String queue, String outcome, String tier, String reason, String exception) {
		return this.registry.get(RetryEventMetrics.MESSAGES)
			.tags("queue", queue, "outcome", outcome, "tier", tier, "reason", reason, "exception", exception)
			.counter()
			.count();
	}

}
