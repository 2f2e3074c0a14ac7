package io.github.tieredretry.testsupport;

import io.github.tieredretry.annotation.RetryableListener;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * The application that tests of the starter's reliability start (or extend) instead of
 * copying one: a retryable {@link Script scripted} listener on the queue
 * {@code test.work} (a queue of the type {@code test.work-queue-type}, if set; with
 * {@code test.concurrency} consumers, 1 by default; started with the application unless
 * {@code test.auto-startup} is {@code false}; a {@code reject} is not retried) and, when
 * {@code test.slow} is set, one with the policy {@code slow} on that queue, whose
 * container a test can stop by its id {@value #SLOW} (to delete the queue under waiting
 * retries, say). It records every invocation ({@link InvocationRecorder}) and the
 * starter's events ({@link RetryEvents}). With {@code @SpringBootTest}, name it in
 * {@code classes}.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
public class WorkQueueApplication {

	/** The listener id of the listener on {@code test.work}. */
	public static final String WORK = "work";

	/** The listener id of the listener on {@code test.slow}. */
	public static final String SLOW = "slow";

	@Bean
	InvocationRecorder deliveries() {
		return new InvocationRecorder();
	}

	@Bean
	RetryEvents retryEvents() {
		return new RetryEvents();
	}

	@Bean
	Queue workQueue(@Value("${test.work}") String name, @Value("${test.work-queue-type:}") String type) {
		return type.isEmpty() ? new Queue(name) : QueueBuilder.durable(name).withArgument("x-queue-type", type).build();
	}

	@Bean
	WorkListener workListener(InvocationRecorder deliveries) {
		return new WorkListener(deliveries);
	}

	@Bean
	@ConditionalOnProperty("test.slow")
	Queue slowQueue(@Value("${test.slow}") String name) {
		return new Queue(name);
	}

	@Bean
	@ConditionalOnProperty("test.slow")
	SlowListener slowListener(InvocationRecorder deliveries) {
		return new SlowListener(deliveries);
	}

	static class WorkListener extends ScriptedListener {

		WorkListener(InvocationRecorder deliveries) {
			super(deliveries);
		}

		@RabbitListener(id = WORK, queues = "${test.work}", concurrency = "${test.concurrency:1}",
				autoStartup = "${test.auto-startup:true}")
		@RetryableListener(noRetryOn = IllegalArgumentException.class)
		void onWork(Message message) {
			run(message);
		}

	}

	static class SlowListener extends ScriptedListener {

		SlowListener(InvocationRecorder deliveries) {
			super(deliveries);
		}

		@RabbitListener(id = SLOW, queues = "${test.slow}")
		@RetryableListener(policy = "slow")
		void onSlow(Message message) {
			run(message);
		}

	}

}
