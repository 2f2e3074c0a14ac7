package io.github.tieredretry.forwarding;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ReturnListener;
import com.rabbitmq.client.ShutdownSignalException;

import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * Publishes one message persistently, mandatory, and waits for the broker's confirm.
 * <p>
 * Uses raw AMQP properties so that a forwarded message keeps exactly the properties it was received
 * with, and a connection factory of its own (publisher confirms on, separate from the consumers'
 * connection) whatever the application set for {@code spring.rabbitmq.publisher-confirm-type}.
 * A return (unroutable) is delivered by the broker before the confirm, on the same channel, so it is
 * known once the confirm has arrived.
 */
public final class ConfirmedPublisher {

	private final ConnectionFactory connectionFactory;

	private final long confirmTimeoutMillis;

	/**
	 * Create a publisher.
	 * @param connectionFactory a factory whose channels are in confirm mode (publisher confirm type SIMPLE)
	 * @param confirmTimeout how long to wait for each confirm
	 */
	public ConfirmedPublisher(ConnectionFactory connectionFactory, Duration confirmTimeout) {
		this.connectionFactory = connectionFactory;
		this.confirmTimeoutMillis = confirmTimeout.toMillis();
	}

	/**
	 * Publish and wait for the confirm.
	 * @param exchange the exchange
	 * @param routingKey the routing key
	 * @param properties the message properties, published as they are
	 * @param body the body
	 * @throws ForwardFailedException when the publish is nacked, returned, times out or fails
	 */
	public void publish(String exchange, String routingKey, AMQP.BasicProperties properties, byte[] body) {
		Channel channel;
		try {
			Connection connection = this.connectionFactory.createConnection();
			channel = connection.createChannel(false);
		}
		catch (RuntimeException ex) {
			throw new ForwardFailedException(ForwardFailedException.Kind.PUBLISH_ERROR,
					"No channel to publish to " + describe(exchange, routingKey) + ": " + ex.getMessage(), ex);
		}
		AtomicReference<String> returned = new AtomicReference<>();
		ReturnListener returnListener = (replyCode, replyText, returnedExchange, returnedRoutingKey, returnedProperties,
				returnedBody) -> returned.set(replyCode + " " + replyText);
		try {
			channel.addReturnListener(returnListener);
			AMQP.BasicProperties publishable = ForwardedProperties.fitToFrame(
					ForwardedProperties.withPublishableUserId(properties, this.connectionFactory.getUsername()),
					body.length, channel.getConnection().getFrameMax());
			channel.basicPublish(exchange, routingKey, true, publishable, body);
			// OrDie: a nack or a timeout closes the channel, so a late confirm can never be
			// mistaken for the confirm of the next publish on a cached channel.
			channel.waitForConfirmsOrDie(this.confirmTimeoutMillis);
		}
		catch (TimeoutException ex) {
			throw new ForwardFailedException(ForwardFailedException.Kind.TIMEOUT, "No confirm within "
					+ this.confirmTimeoutMillis + " ms for the publish to " + describe(exchange, routingKey), ex);
		}
		catch (IOException ex) {
			// amqp-client signals a nack from waitForConfirmsOrDie with this message.
			ForwardFailedException.Kind kind = String.valueOf(ex.getMessage()).contains("nacks received")
					? ForwardFailedException.Kind.NACKED : errorKind(ex);
			throw new ForwardFailedException(kind,
					"Publish to " + describe(exchange, routingKey) + " failed: " + ex.getMessage(), ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new ForwardFailedException(ForwardFailedException.Kind.PUBLISH_ERROR,
					"Interrupted while waiting for the confirm of " + describe(exchange, routingKey), ex);
		}
		catch (RuntimeException ex) {
			throw new ForwardFailedException(errorKind(ex),
					"Publish to " + describe(exchange, routingKey) + " failed: " + ex.getMessage(), ex);
		}
		finally {
			closeQuietly(channel, returnListener);
		}
		String unroutable = returned.get();
		if (unroutable != null) {
			throw new ForwardFailedException(ForwardFailedException.Kind.RETURNED,
					"Broker returned the message published to " + describe(exchange, routingKey) + ": " + unroutable);
		}
	}

	/**
	 * A publish to an exchange that does not exist closes the channel with 404; it shows up as the cause
	 * of whatever the next channel operation throws.
	 */
	private static ForwardFailedException.Kind errorKind(Throwable failure) {
		for (Throwable current = failure; current != null; current = current.getCause()) {
			if (current instanceof ShutdownSignalException signal && signal.getReason() instanceof AMQP.Channel.Close close
					&& close.getReplyCode() == AMQP.NOT_FOUND) {
				return ForwardFailedException.Kind.MISSING_EXCHANGE;
			}
			if (current.getCause() == current) {
				break;
			}
		}
		return ForwardFailedException.Kind.PUBLISH_ERROR;
	}

	private static void closeQuietly(Channel channel, ReturnListener returnListener) {
		try {
			channel.removeReturnListener(returnListener);
			channel.close();
		}
		catch (IOException | TimeoutException | RuntimeException ex) {
			// The channel is unusable either way; the cache replaces it.
		}
	}

	private static String describe(String exchange, String routingKey) {
		return "exchange '" + exchange + "' with routing key '" + routingKey + "'";
	}

}
