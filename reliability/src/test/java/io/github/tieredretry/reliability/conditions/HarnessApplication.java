package io.github.tieredretry.reliability.conditions;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.event.ForwardFailedEvent;
import io.github.tieredretry.event.MessageParkedEvent;
import io.github.tieredretry.event.PublisherBlockedEvent;
import io.github.tieredretry.event.PublisherUnblockedEvent;
import io.github.tieredretry.event.RetryScheduledEvent;
import io.github.tieredretry.testbrokers.HarnessBroker;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.OutboundFrames;
import io.github.tieredretry.testsupport.Script;
import io.github.tieredretry.testsupport.TestApplications;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.amqp.autoconfigure.ConnectionFactoryCustomizer;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;

/**
 * A Spring Boot application with one retryable listener on queue {@code test.work}, run
 * in the test's JVM against a virtual host of a harness broker. Its listener follows the
 * {@link Script} in each message body.
 */
final class HarnessApplication implements AutoCloseable {

	private final ConfigurableApplicationContext context;

	private HarnessApplication(ConfigurableApplicationContext context) {
		this.context = context;
	}

	/**
	 * Start the application.
	 * @param broker the harness broker
	 * @param vhost its virtual host
	 * @param properties more properties (at least {@code test.work})
	 * @return the running application
	 */
	static HarnessApplication start(HarnessBroker broker, String vhost, Map<String, Object> properties) {
		Map<String, Object> all = ConditionsBroker.applicationProperties(broker, vhost);
		all.putAll(properties);
		return new HarnessApplication(TestApplications.run(App.class, all));
	}

	InvocationRecorder deliveries() {
		return this.context.getBean(InvocationRecorder.class);
	}

	StarterEvents events() {
		return this.context.getBean(StarterEvents.class);
	}

	/**
	 * The AMQP methods the application sent so far, on every connection of Spring Boot's
	 * connection factory (the listeners' acks, nacks and rejects among them).
	 * @return the recorded methods
	 */
	OutboundFrames frames() {
		return this.context.getBean(OutboundFrames.class);
	}

	<T> T bean(Class<T> type) {
		return this.context.getBean(type);
	}

	/** Stop consuming: the listener containers stop, forwards and tiers go on. */
	void stopListeners() {
		bean(RabbitListenerEndpointRegistry.class).stop();
	}

	void startListeners() {
		bean(RabbitListenerEndpointRegistry.class).start();
	}

	@Override
	public void close() {
		this.context.close();
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		InvocationRecorder deliveries() {
			return new InvocationRecorder();
		}

		@Bean
		Queue workQueue(@Value("${test.work}") String name, @Value("${test.work-max-length:-1}") int maxLength,
				@Value("${test.work-overflow:drop-head}") String overflow) {
			// A bounded work queue when the test asks for one.
			Map<String, Object> arguments = (maxLength < 0) ? Map.of()
					: Map.of("x-max-length", maxLength, "x-overflow", overflow);
			return new Queue(name, true, false, false, arguments);
		}

		@Bean
		Listener listener(InvocationRecorder deliveries) {
			return new Listener(deliveries);
		}

		@Bean
		StarterEvents starterEvents() {
			return new StarterEvents();
		}

		@Bean
		OutboundFrames frames() {
			return new OutboundFrames();
		}

		@Bean
		ConnectionFactoryCustomizer recordOutboundFrames(OutboundFrames frames) {
			return (factory) -> factory.setTrafficListener(frames);
		}

	}

	/** The starter's application events, as the application sees them. */
	static class StarterEvents {

		final List<Object> received = new CopyOnWriteArrayList<>();

		@EventListener({ PublisherBlockedEvent.class, PublisherUnblockedEvent.class, ForwardFailedEvent.class,
				MessageParkedEvent.class, RetryScheduledEvent.class })
		void on(Object event) {
			this.received.add(event);
		}

		<T> List<T> of(Class<T> type) {
			return this.received.stream().filter(type::isInstance).map(type::cast).toList();
		}

	}

	static class Listener {

		private final InvocationRecorder deliveries;

		Listener(InvocationRecorder deliveries) {
			this.deliveries = deliveries;
		}

		@RabbitListener(queues = "${test.work}", concurrency = "${test.concurrency:1}")
		@RetryableListener
		void onWork(Message message) {
			Script.run(message, this.deliveries);
		}

	}

}
