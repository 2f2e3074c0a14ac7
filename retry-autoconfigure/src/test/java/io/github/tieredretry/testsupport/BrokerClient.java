package io.github.tieredretry.testsupport;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import io.github.tieredretry.headers.RetryHeaders;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A plain AMQP client for tests: publishes and reads messages exactly as they are on the
 * wire, with none of Spring AMQP's property conversion, so that tests can compare bytes
 * and properties.
 */
public final class BrokerClient implements AutoCloseable {

	private final Connection connection;

	private final Channel channel;

	public BrokerClient() {
		this.connection = TestBroker.get().newConnection();
		try {
			this.channel = this.connection.createChannel();
			this.channel.confirmSelect();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * A message as read from a queue.
	 *
	 * @param properties its properties
	 * @param body its body
	 * @param deliveryTag the delivery tag (already acked)
	 */
	public record Received(AMQP.BasicProperties properties, byte[] body, long deliveryTag) {

		public Map<String, Object> headers() {
			return (this.properties.getHeaders() != null) ? this.properties.getHeaders() : Map.of();
		}

		public String header(String name) {
			Object value = headers().get(name);
			return (value != null) ? value.toString() : null;
		}

		public String bodyText() {
			return new String(this.body, java.nio.charset.StandardCharsets.UTF_8);
		}

		/**
		 * Assert why this copy was parked and the failure it carries.
		 * @param reason its {@code retry-parked-reason}
		 * @param failure the type of its {@code retry-exception}
		 * @return this copy, for more assertions
		 */
		public Received assertParked(String reason, Class<? extends Throwable> failure) {
			assertThat(header(RetryHeaders.PARKED_REASON)).as("reason parked").isEqualTo(reason);
			assertThat(header(RetryHeaders.EXCEPTION)).as("failure parked with").isEqualTo(failure.getName());
			return this;
		}

	}

	public void declareQueue(String queue) {
		declareQueue(queue, Map.of());
	}

	public void declareQueue(String queue, Map<String, Object> arguments) {
		run(() -> this.channel.queueDeclare(queue, true, false, false, arguments));
	}

	public void deleteQueue(String queue) {
		run(() -> this.channel.queueDelete(queue));
	}

	public void purge(String queue) {
		run(() -> this.channel.queuePurge(queue));
	}

	public void declareFanout(String exchange) {
		run(() -> this.channel.exchangeDeclare(exchange, "fanout", true));
	}

	public void bind(String queue, String exchange) {
		run(() -> this.channel.queueBind(queue, exchange, ""));
	}

	public void deleteExchange(String exchange) {
		run(() -> this.channel.exchangeDelete(exchange));
	}

	/**
	 * Publish and wait for the broker's confirm.
	 * @param exchange the exchange
	 * @param routingKey the routing key
	 * @param properties the properties
	 * @param body the body
	 */
	public void publish(String exchange, String routingKey, AMQP.BasicProperties properties, byte[] body) {
		run(() -> {
			this.channel.basicPublish(exchange, routingKey, properties, body);
			this.channel.waitForConfirmsOrDie(10_000);
			return null;
		});
	}

	/**
	 * Number of ready messages in a queue.
	 * @param queue the queue
	 * @return the count
	 */
	public long count(String queue) {
		return run(() -> this.channel.messageCount(queue));
	}

	/**
	 * Take (get and ack) every ready message of a queue.
	 * @param queue the queue
	 * @return the messages, oldest first
	 */
	public List<Received> drain(String queue) {
		List<Received> messages = new ArrayList<>();
		GetResponse response;
		while ((response = run(() -> this.channel.basicGet(queue, true))) != null) {
			messages
				.add(new Received(response.getProps(), response.getBody(), response.getEnvelope().getDeliveryTag()));
		}
		return messages;
	}

	public boolean queueExists(String queue) {
		try (Channel probe = this.connection.createChannel()) {
			probe.queueDeclarePassive(queue);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
		catch (TimeoutException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Whether an existing queue has exactly these (equivalent) arguments, asked by
	 * declaring it with them on a channel of its own: RabbitMQ refuses (406) a
	 * declaration with other arguments.
	 * @param queue a durable queue that exists
	 * @param arguments the arguments to compare
	 * @return whether the declaration was accepted
	 */
	public boolean declaresEquivalently(String queue, Map<String, Object> arguments) {
		try (Channel probe = this.connection.createChannel()) {
			probe.queueDeclare(queue, true, false, false, arguments);
			return true;
		}
		catch (IOException ex) {
			if (!String.valueOf(ex.getCause()).contains("inequivalent arg")) {
				throw new IllegalStateException(ex);
			}
			return false;
		}
		catch (TimeoutException ex) {
			throw new IllegalStateException(ex);
		}
	}

	public Channel channel() {
		return this.channel;
	}

	private <T> T run(IoCall<T> call) {
		try {
			return call.call();
		}
		catch (IOException | InterruptedException | TimeoutException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Override
	public void close() {
		try {
			this.connection.close();
		}
		catch (IOException ex) {
			// closing anyway
		}
	}

	@FunctionalInterface
	private interface IoCall<T> {

		T call() throws IOException, InterruptedException, TimeoutException;

	}

}
