package io.github.tieredretry.autoconfigure;

import com.rabbitmq.client.Channel;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.observation.RetryForwardObservationConvention;
import io.github.tieredretry.observation.RetryObservations;
import io.github.tieredretry.observation.RetryReplayObservationConvention;
import io.github.tieredretry.observation.RetryTracingObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.propagation.Propagator;

import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

/**
 * Auto-configuration of the starter's observations ({@code rabbitmq.retry.forward},
 * {@code rabbitmq.retry.replay}) when the application has an {@link ObservationRegistry},
 * with conventions a {@link RetryForwardObservationConvention} or
 * {@link RetryReplayObservationConvention} bean replaces; and, with Micrometer Tracing,
 * the handler that keeps retries in their trace and links replays to their parked trace.
 */
@AutoConfiguration(after = TieredRetryAutoConfiguration.class,
		afterName = { "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration",
				"org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration" })
@ConditionalOnClass({ RabbitTemplate.class, Channel.class, ObservationRegistry.class })
@ConditionalOnBean({ ObservationRegistry.class, RetryTopology.class })
public final class RetryObservationAutoConfiguration {

	@Bean
	RetryObservations retryObservations(ObservationRegistry registry,
			ObjectProvider<RetryForwardObservationConvention> forwardConvention,
			ObjectProvider<RetryReplayObservationConvention> replayConvention) {
		return new RetryObservations(registry, forwardConvention.getIfUnique(), replayConvention.getIfUnique());
	}

	/**
	 * Spans of forwards and replays, when Micrometer Tracing has a tracer. After Spring
	 * Boot's tracing auto-configuration: the handler is a
	 * {@code PropagatingSenderTracingObservationHandler}, and Spring Boot defines its own
	 * (for every other sender, such as the {@code RabbitTemplate}) only if there is none
	 * yet.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler")
	@ConditionalOnBean(type = { "io.micrometer.tracing.Tracer", "io.micrometer.tracing.propagation.Propagator" })
	static class TracingConfiguration {

		/**
		 * Before Spring Boot's sender handler: tracing handlers are tried in order, the
		 * first that applies wins.
		 */
		static final int ORDER = MicrometerTracingAutoConfiguration.SENDER_TRACING_OBSERVATION_HANDLER_ORDER - 100;

		@Bean
		@ConditionalOnMissingBean
		@Order(ORDER)
		RetryTracingObservationHandler retryTracingObservationHandler(Tracer tracer, Propagator propagator) {
			return new RetryTracingObservationHandler(tracer, propagator);
		}

	}

}
