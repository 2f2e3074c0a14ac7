package io.github.tieredretry.reliability.conditions;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import io.github.tieredretry.annotation.Breaker;
import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.testbrokers.HarnessBroker;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.TestApplications;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * RabbitMQ's consumer timeout against a listener paused by its circuit breaker, whose
 * consumers hold their messages unacknowledged for as long as the pause lasts (30 minutes
 * is the broker's default timeout; 2 s here). On RabbitMQ before 4.3 the broker closes
 * the channel and puts the messages back, and a quorum queue counts each such return
 * towards its delivery limit; 4.3 cancels the consumer and does not count it. A paused
 * listener moves a message that comes back with a count through a tier, as a new message,
 * so that however long the pause lasts, the queue's limit (2 here, 20 by default on
 * RabbitMQ 4) is never reached: nothing dropped or dead-lettered, every message processed
 * once the listener resumes. On a node of its own: the timeout is a node-wide setting.
 */
class ConsumerTimeoutIntegrationTests {

	static final String WORK = "paused.orders";

	static final String DEAD_LETTERS = "paused.dead-letters";

	static final int MESSAGES = 5;

	@AfterEach
	void restoreTheBrokersDefaults() {
		ConditionsBroker.setRabbitEnv("consumer_timeout", "1800000");
		ConditionsBroker.setRabbitEnv("channel_tick_interval", "60000");
	}

	@Test
	void pauseLongerThanTheConsumerTimeoutSpendsNoDeliveryLimitAndLosesNothing() throws Exception {
		HarnessBroker broker = ConditionsBroker.get();
		String vhost = ConditionsBroker.newVirtualHost("consumer-timeout");
		// Channels check their deliveries' age every tick (60 s by default): new channels
		// pick both settings up.
		ConditionsBroker.setRabbitEnv("consumer_timeout", "2000");
		ConditionsBroker.setRabbitEnv("channel_tick_interval", "500");
		Map<String, Object> properties = ConditionsBroker.applicationProperties(broker, vhost);
		properties.put("spring.rabbitmq.listener.simple.prefetch", 2);
		properties.put("retry.queue-type", "quorum");
		properties.put("retry.parking-lot", "paused.parking-lot");
		properties.put("retry.tiers", "500ms");
		properties.put("retry.defaults.delays", "500ms");
		properties.put("retry.defaults.max-retries", 100);
		// Pauses at the first failure, probes one message every 3 s.
		properties.put("retry.defaults.breaker.sliding-window-size", 1);
		properties.put("retry.defaults.breaker.minimum-calls", 1);
		properties.put("retry.defaults.breaker.wait-in-open-state", "3s");
		properties.put("retry.defaults.breaker.probes-in-half-open-state", 1);
		try (ConfigurableApplicationContext app = TestApplications.run(App.class, properties);
				Connection connection = broker.connect(vhost, "consumer-timeout-test")) {
			Downstream downstream = app.getBean(Downstream.class);
			downstream.down = true;
			Channel channel = connection.createChannel();
			channel.confirmSelect();
			List<String> ids = new ArrayList<>();
			for (int i = 0; i < MESSAGES; i++) {
				String id = "order-" + i;
				ids.add(id);
				channel.basicPublish("", WORK, new AMQP.BasicProperties.Builder().messageId(id).build(), id.getBytes());
			}
			channel.waitForConfirmsOrDie(10_000);

			// The first failure pauses the listener; then at least 6 probes, 3 s apart:
			// held messages outlive the consumer timeout several times over, more often
			// than the queue's limit of 2 would allow had each timeout counted towards
			// it.
			InvocationRecorder recorder = app.getBean(InvocationRecorder.class);
			await().atMost(Duration.ofSeconds(90)).until(() -> ids.stream().mapToLong(recorder::count).sum() >= 1 + 6);
			downstream.down = false;

			await().atMost(Duration.ofSeconds(30)).until(() -> ids.stream().allMatch(recorder::succeeded));
			assertThat(channel.messageCount(DEAD_LETTERS)).as("dropped past the delivery limit").isZero();
			assertThat(channel.messageCount("paused.parking-lot")).isZero();
		}
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		InvocationRecorder invocationRecorder() {
			return new InvocationRecorder();
		}

		@Bean
		Downstream downstream() {
			return new Downstream();
		}

		@Bean
		Queue workQueue() {
			return QueueBuilder.durable(WORK)
				.quorum()
				.deliveryLimit(2)
				.deadLetterExchange("")
				.deadLetterRoutingKey(DEAD_LETTERS)
				.build();
		}

		@Bean
		Queue deadLetters() {
			return QueueBuilder.durable(DEAD_LETTERS).build();
		}

		@Bean
		Listener listener(InvocationRecorder recorder, Downstream downstream) {
			return new Listener(recorder, downstream);
		}

	}

	/** The listener's downstream, down until the test says otherwise. */
	static class Downstream {

		volatile boolean down;

	}

	static class Listener {

		private final InvocationRecorder recorder;

		private final Downstream downstream;

		Listener(InvocationRecorder recorder, Downstream downstream) {
			this.recorder = recorder;
			this.downstream = downstream;
		}

		@RabbitListener(queues = WORK)
		@RetryableListener(breaker = Breaker.ON)
		void onOrder(Message message) {
			boolean down = this.downstream.down;
			this.recorder.record(message.getMessageProperties().getMessageId(),
					message.getMessageProperties().getRetryCount(), !down);
			if (down) {
				throw new IllegalStateException("downstream unavailable");
			}
		}

	}

}
