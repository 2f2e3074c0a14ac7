package io.github.tieredretry.autoconfigure;

import io.github.tieredretry.internal.actuate.RetryHealthIndicator;
import io.github.tieredretry.internal.forwarding.PublisherBlockedState;
import io.github.tieredretry.internal.install.RetryBackends;
import io.github.tieredretry.internal.metrics.RetryQueueDepths;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.listener.ListenerGates;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@code retry} health indicator;
 * {@code management.health.retry.enabled=false} switches it off.
 */
@AutoConfiguration(after = { TieredRetryAutoConfiguration.class, RetryOperationsAutoConfiguration.class })
@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
@ConditionalOnBean({ RetryQueueDepths.class, RetryTopology.class })
@ConditionalOnEnabledHealthIndicator("retry")
public final class RetryHealthContributorAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = { "retryHealthIndicator", "retryHealthContributor" })
	RetryHealthIndicator retryHealthIndicator(RetryQueueDepths depths, RetryTopology topology,
			ObjectProvider<PublisherBlockedState> publisherState, ObjectProvider<ListenerGates> breakers,
			ObjectProvider<RetryBackends> backends) {
		return new RetryHealthIndicator(depths, topology, publisherState.getIfAvailable(),
				breakers.getIfAvailable(() -> ListenerGates.WITHOUT_BREAKERS), backends.getIfAvailable());
	}

}
