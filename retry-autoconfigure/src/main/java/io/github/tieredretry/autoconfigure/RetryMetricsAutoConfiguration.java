package io.github.tieredretry.autoconfigure;

import io.github.tieredretry.internal.delayedsend.ScheduledCounts;
import io.github.tieredretry.internal.forwarding.PublisherBlockedState;
import io.github.tieredretry.internal.metrics.BreakerMetrics;
import io.github.tieredretry.internal.metrics.PublisherBlockedMetrics;
import io.github.tieredretry.internal.metrics.RetryEventMetrics;
import io.github.tieredretry.internal.metrics.RetryQueueDepthMetrics;
import io.github.tieredretry.internal.metrics.RetryQueueDepths;
import io.github.tieredretry.internal.metrics.ScheduledSendMetrics;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.listener.ListenerGates;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of retry metrics: counter {@code rabbitmq.retry.messages}, timers
 * {@code rabbitmq.retry.recovery} and {@code rabbitmq.retry.delay}, gauge
 * {@code rabbitmq.retry.depth} and the publisher's blocked state
 * ({@code rabbitmq.retry.publisher.blocked}, {@code rabbitmq.retry.publisher.blocks}),
 * the delayed sends waiting per tier ({@code rabbitmq.retry.scheduled}), when a
 * {@link MeterRegistry} is available and {@code retry.metrics.enabled} is not
 * {@code false}.
 */
@AutoConfiguration(
		after = { TieredRetryAutoConfiguration.class, RetryOperationsAutoConfiguration.class,
				DelayedSendAutoConfiguration.class },
		afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean({ MeterRegistry.class, RetryTopology.class })
@ConditionalOnBooleanProperty(name = "retry.metrics.enabled", matchIfMissing = true)
public final class RetryMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RetryEventMetrics retryEventMetrics(MeterRegistry registry) {
		return new RetryEventMetrics(registry);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(ListenerGates.class)
	BreakerMetrics retryBreakerMetrics(ListenerGates breakers) {
		return new BreakerMetrics(breakers);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(PublisherBlockedState.class)
	PublisherBlockedMetrics retryPublisherBlockedMetrics(PublisherBlockedState state) {
		return new PublisherBlockedMetrics(state);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(ScheduledCounts.class)
	ScheduledSendMetrics retryScheduledSendMetrics(ScheduledCounts counts) {
		return new ScheduledSendMetrics(counts);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(RetryQueueDepths.class)
	RetryQueueDepthMetrics retryQueueDepthMetrics(RetryQueueDepths depths, RetryTopology topology) {
		return new RetryQueueDepthMetrics(depths, topology);
	}

}
