package io.github.tieredretry.autoconfigure;

import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * When {@code retry.enabled=false}, says at startup which {@code @RetryableListener}
 * methods are left without retries and what their failures do instead: with Spring Boot's
 * container defaults, a failing message is requeued and redelivered at once, in a hot
 * loop.
 */
@AutoConfiguration(after = RabbitAutoConfiguration.class)
@ConditionalOnClass(RabbitListener.class)
@ConditionalOnBooleanProperty(name = "retry.enabled", havingValue = false)
public final class RetryDisabledAutoConfiguration {

	@Bean
	static UnprotectedListenersWarning unprotectedRetryableListenersWarning(Environment environment) {
		return new UnprotectedListenersWarning(environment);
	}

}
