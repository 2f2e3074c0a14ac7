package io.github.tieredretry.test;

import io.github.tieredretry.event.MessageParkedEvent;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration imported by {@link TieredRetryTest}: the {@link RetryOutcomes} bean.
 */
@AutoConfiguration
@ConditionalOnClass(MessageParkedEvent.class)
public final class RetryOutcomesAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RetryOutcomes retryOutcomes() {
		return new RetryOutcomes();
	}

}
