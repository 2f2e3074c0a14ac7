package io.github.tieredretry.autoconfigure;

import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

import io.github.tieredretry.annotation.RetryableListener;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Collects the {@code @RetryableListener} methods while retries are disabled, and logs
 * one WARN naming them once every singleton exists.
 */
final class UnprotectedListenersWarning implements BeanPostProcessor, SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(TieredRetryAutoConfiguration.class);

	private final Environment environment;

	private final Set<String> listeners = new TreeSet<>();

	UnprotectedListenersWarning(Environment environment) {
		this.environment = environment;
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		Class<?> type = AopUtils.getTargetClass(bean);
		if (AnnotationUtils.isCandidateClass(type, RetryableListener.class)) {
			String name = ClassUtils.getShortName(type);
			if (AnnotatedElementUtils.hasAnnotation(type, RetryableListener.class)) {
				this.listeners.add(name);
			}
			ReflectionUtils.doWithMethods(type, (method) -> this.listeners.add(name + "#" + method.getName()),
					(method) -> AnnotatedElementUtils.hasAnnotation(method, RetryableListener.class));
		}
		return bean;
	}

	@Override
	public void afterSingletonsInstantiated() {
		if (!this.listeners.isEmpty()) {
			logger.warn("retry.enabled=false: @RetryableListener is ignored on " + String.join(", ", this.listeners)
					+ ". " + failuresInstead()
					+ " Remove retry.enabled=false (or set it to true) to give them tiered retries again.");
		}
	}

	// What a failed message does without tiered retries, with Spring Boot's container
	// factory.
	private String failuresInstead() {
		String type = this.environment.getProperty("spring.rabbitmq.listener.type", "simple").toLowerCase(Locale.ROOT);
		String prefix = "spring.rabbitmq.listener." + type + ".";
		String rejected = "then rejected: dropped, or dead-lettered if its queue has a dead-letter exchange.";
		if (this.environment.getProperty(prefix + "retry.enabled", Boolean.class, false)) {
			return "A message they fail on is retried in the consumer thread, which sleeps between attempts (" + prefix
					+ "retry.*), " + rejected;
		}
		if (!this.environment.getProperty(prefix + "default-requeue-rejected", Boolean.class, true)) {
			return "A message they fail on is not retried, " + rejected;
		}
		// Spring AMQP requeues with basic.nack(requeue=true). Quorum queues count
		// requeues towards their delivery limit (20 by default) from RabbitMQ 4.0 on, but
		// 4.3 counts basic.reject only (RetryDisabledIntegrationTests).
		return "A message they fail on is requeued (basic.nack with requeue=true) and delivered again at once. "
				+ "From a classic queue (any RabbitMQ version), and from a quorum queue on RabbitMQ 3.x or 4.3 and "
				+ "later, it comes back again and again: a hot loop while the failure lasts. From a quorum queue on "
				+ "RabbitMQ 4.0 to 4.2 it is delivered 21 times within a second, then dropped by its delivery limit "
				+ "(20 by default), or dead-lettered if the queue has a dead-letter exchange. " + prefix
				+ "default-requeue-rejected=false drops or dead-letters it after its first failure instead.";
	}

}
