package io.github.tieredretry.reliability.conditions;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.internal.console.RetryOverview;
import io.github.tieredretry.testbrokers.HarnessBroker;
import io.github.tieredretry.testsupport.TestApplications;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbitmq.client.AmqpConnectionFactory;
import org.springframework.amqp.rabbitmq.client.SingleAmqpConnectionFactory;
import org.springframework.amqp.rabbitmq.client.config.RabbitAmqpListenerContainerFactory;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.amqp.autoconfigure.RabbitConnectionDetails;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The "Exact delays" set-up of docs/backends.md of a listener of the RabbitMQ AMQP 1.0
 * client, as written, pasted into one {@code @Configuration} class
 * (DocumentationSourcesTests in docs-tests checks that {@link ExactDelaysApplication}
 * holds that block), run in a virtual host of its own: on RabbitMQ 4.0 and later its
 * listener consumes the queue of that virtual host (an {@code Environment} that ignored
 * {@code spring.rabbitmq.virtual-host} would consume from {@code /}, where the queue does
 * not exist) and its failed message is retried, by the broker on 4.3, through the tiers
 * on 4.0; before 4.0 startup fails, saying the client needs 4.0, and not with a circular
 * reference between the class and its container factory.
 */
class ExactDelaysSnippetIntegrationTests {

	static final List<Duration> DELAYS = List.of(Duration.ofMillis(500), Duration.ofSeconds(1));

	HarnessBroker broker;

	String vhost;

	Connection connection;

	String version;

	@BeforeEach
	void virtualHost() throws Exception {
		this.broker = ConditionsBroker.get();
		this.vhost = ConditionsBroker.newVirtualHost("exact-delays");
		this.connection = this.broker.connect(this.vhost, "exact-delays");
		this.version = String.valueOf(this.connection.getServerProperties().get("version"));
		try (Channel channel = this.connection.createChannel()) {
			channel.queueDeclare("orders", true, false, false, Map.of("x-queue-type", "quorum"));
		}
	}

	@AfterEach
	void disconnect() {
		this.connection.abort();
	}

	@Test
	void theReadmesSetUpInOneConfigurationClassConsumesTheQueueOfItsVirtualHostAndRetries() throws Exception {
		if (!atLeast(4, 0)) {
			// Past the creation of the class's beans, which a circular reference would
			// stop.
			assertThatThrownBy(() -> start().close())
				.hasStackTraceContaining("uses the RabbitMQ AMQP 1.0 client, which needs RabbitMQ 4.0 or later, and "
						+ "the broker is RabbitMQ " + this.version);
			return;
		}
		try (ConfigurableApplicationContext application = start()) {
			String order = "fail-twice-" + UUID.randomUUID();
			publish(order);

			Orders orders = application.getBean(Orders.class);
			await().atMost(Duration.ofSeconds(30)).until(() -> orders.attempts(order).size() == 3);
			List<Long> attempts = orders.attempts(order);
			for (int retry = 1; retry <= 2; retry++) {
				assertThat(Duration.ofNanos(attempts.get(retry) - attempts.get(retry - 1)))
					.as("retry %d after its delay", retry)
					.isGreaterThanOrEqualTo(DELAYS.get(retry - 1));
			}
			RetryOverview.Backend backend = application.getBean(RetryOverview.class)
				.describe()
				.listeners()
				.get(0)
				.backend();
			assertThat(backend.running()).isEqualTo(atLeast(4, 3) ? "broker" : "tiers");
			// Nothing left in the queue of the virtual host, nothing parked.
			await().atMost(Duration.ofSeconds(10)).until(() -> depth("orders") == 0);
			assertThat(depth("retry.parking-lot")).isZero();
		}
	}

	private ConfigurableApplicationContext start() {
		Map<String, Object> properties = ConditionsBroker.applicationProperties(this.broker, this.vhost);
		properties.put("retry.tiers", "500ms, 1s");
		properties.put("retry.defaults.max-retries", "2");
		properties.put("retry.defaults.delays", "500ms, 1s");
		return TestApplications.run(ExactDelaysApplication.class, properties);
	}

	private void publish(String order) throws Exception {
		try (Channel channel = this.connection.createChannel()) {
			channel.basicPublish("", "orders",
					new AMQP.BasicProperties.Builder().contentType("text/plain").deliveryMode(2).build(),
					order.getBytes(StandardCharsets.UTF_8));
		}
	}

	private long depth(String queue) throws Exception {
		try (Channel channel = this.connection.createChannel()) {
			return channel.queueDeclarePassive(queue).getMessageCount();
		}
	}

	private boolean atLeast(int major, int minor) {
		String[] parts = this.version.split("\\.");
		int actualMajor = Integer.parseInt(parts[0]);
		return actualMajor > major || (actualMajor == major && Integer.parseInt(parts[1]) >= minor);
	}

	/**
	 * An application whose one {@code @Configuration} class holds the block of
	 * docs/backends.md as written, between the two marker comments.
	 */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class ExactDelaysApplication {

		private final Orders orders;

		ExactDelaysApplication(Orders orders) {
			this.orders = orders;
		}

		@Bean
		static Orders orders() {
			return new Orders();
		}

		// docs/backends.md "Exact delays: listeners of the AMQP 1.0 client" begins
		@Bean(destroyMethod = "close")
		static Environment amqpEnvironment(RabbitConnectionDetails details) {
			RabbitConnectionDetails.Address address = details.getFirstAddress();
			String virtualHost = details.getVirtualHost();
			return new AmqpEnvironmentBuilder().connectionSettings()
				.host(address.host())
				.port(address.port())
				.username(details.getUsername())
				.password(details.getPassword())
				.virtualHost((virtualHost != null) ? virtualHost : "/")
				.environmentBuilder()
				.build();
		}

		@Bean
		static SingleAmqpConnectionFactory amqpConnectionFactory(Environment environment) {
			return new SingleAmqpConnectionFactory(environment);
		}

		@Bean
		static RabbitAmqpListenerContainerFactory amqpContainerFactory(AmqpConnectionFactory connectionFactory) {
			return new RabbitAmqpListenerContainerFactory(connectionFactory);
		}

		@RabbitListener(queues = "orders", containerFactory = "amqpContainerFactory")
		@RetryableListener
		void onOrder(String order) {
			this.orders.process(order); // an exception: retried at the exact delays
		}
		// docs/backends.md "Exact delays: listeners of the AMQP 1.0 client" ends

	}

	/**
	 * What the listener of docs/backends.md calls: fails the first two attempts of a
	 * "fail-twice" order.
	 */
	static final class Orders {

		private final Map<String, List<Long>> attempts = new ConcurrentHashMap<>();

		void process(String order) {
			List<Long> times = this.attempts.computeIfAbsent(order, (key) -> new CopyOnWriteArrayList<>());
			times.add(System.nanoTime());
			if (order.startsWith("fail-twice") && times.size() <= 2) {
				throw new IllegalStateException("attempt " + times.size() + " of " + order + " fails");
			}
		}

		List<Long> attempts(String order) {
			return List.copyOf(this.attempts.getOrDefault(order, List.of()));
		}

	}

}
