package io.github.tieredretry.delayedsend;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import com.rabbitmq.client.AMQP;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessagePostProcessor;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.support.DefaultMessagePropertiesConverter;
import org.springframework.amqp.rabbit.support.MessagePropertiesConverter;
import org.springframework.amqp.support.converter.MessageConverter;
import org.springframework.util.Assert;

/**
 * Sends a message to an exchange after a delay, or at a time, through the retry tiers:
 * durable (quorum tiers survive a broker restart), never early, late by at most the
 * smallest tier, on every supported RabbitMQ version, without a plugin.
 * <p>
 * A send is one confirmed publish into the tiers: when a method returns, the broker holds
 * the message. Once due, the starter publishes it to the exchange with the routing key,
 * body and properties as sent, as a direct publish would (publisher confirms, mandatory);
 * should no queue take it then, or the exchange not exist, it is parked with the reason,
 * and a replay from the parking lot sends it to its target again. <pre class="code">
 * delayedSender.convertAndSend("orders", "order.reminder", reminder, Duration.ofMinutes(30));
 * </pre>
 */
public final class DelayedSender {

	private final ScheduledHops hops;

	private final MessageConverter converter;

	private final Duration confirmWait;

	private final MessagePropertiesConverter propertiesConverter = new DefaultMessagePropertiesConverter();

	/**
	 * Create the sender (the starter's auto-configuration does).
	 * @param hops moves a delayed send through the tiers
	 * @param converter converts payloads, as the application's {@code RabbitTemplate}
	 * does
	 * @param confirmWait how long a send waits for the broker's confirm
	 */
	public DelayedSender(ScheduledHops hops, MessageConverter converter, Duration confirmWait) {
		this.hops = hops;
		this.converter = converter;
		this.confirmWait = confirmWait;
	}

	/**
	 * Send a message after a delay.
	 * @param exchange the exchange ({@code ""}: the default exchange, the routing key
	 * naming a queue)
	 * @param routingKey the routing key
	 * @param message the message
	 * @param delay at least this long from now; zero sends at once
	 * @throws DelayedSendException when the broker did not confirm it (not scheduled,
	 * unless only the confirm was lost: see {@link DelayedSendException})
	 */
	public void send(String exchange, String routingKey, Message message, Duration delay) {
		Assert.notNull(delay, "delay must not be null");
		Assert.isTrue(!delay.isNegative(), () -> "delay must not be negative, but is " + delay);
		send(exchange, routingKey, message, this.hops.clock().instant().plus(delay));
	}

	/**
	 * Send a message at a time.
	 * @param exchange the exchange ({@code ""}: the default exchange)
	 * @param routingKey the routing key
	 * @param message the message
	 * @param at not before this time; a time that has passed sends at once
	 * @throws DelayedSendException when the broker did not confirm it (not scheduled,
	 * unless only the confirm was lost: see {@link DelayedSendException})
	 */
	public void send(String exchange, String routingKey, Message message, Instant at) {
		await(sendAsync(exchange, routingKey, message, at), exchange, routingKey);
	}

	/**
	 * Convert a payload, as the application's {@code RabbitTemplate} does, and send it
	 * after a delay.
	 * @param exchange the exchange
	 * @param routingKey the routing key
	 * @param payload the payload
	 * @param delay at least this long from now
	 * @throws DelayedSendException when the broker did not confirm it (not scheduled,
	 * unless only the confirm was lost: see {@link DelayedSendException})
	 */
	public void convertAndSend(String exchange, String routingKey, Object payload, Duration delay) {
		convertAndSend(exchange, routingKey, payload, (message) -> message, delay);
	}

	/**
	 * Convert a payload, post-process the message and send it after a delay.
	 * @param exchange the exchange
	 * @param routingKey the routing key
	 * @param payload the payload
	 * @param postProcessor changes the converted message (headers, properties)
	 * @param delay at least this long from now
	 * @throws DelayedSendException when the broker did not confirm it (not scheduled,
	 * unless only the confirm was lost: see {@link DelayedSendException})
	 */
	public void convertAndSend(String exchange, String routingKey, Object payload, MessagePostProcessor postProcessor,
			Duration delay) {
		send(exchange, routingKey, postProcessor.postProcessMessage(convert(payload)), delay);
	}

	/**
	 * Convert a payload and send it at a time.
	 * @param exchange the exchange
	 * @param routingKey the routing key
	 * @param payload the payload
	 * @param at not before this time
	 * @throws DelayedSendException when the broker did not confirm it (not scheduled,
	 * unless only the confirm was lost: see {@link DelayedSendException})
	 */
	public void convertAndSend(String exchange, String routingKey, Object payload, Instant at) {
		send(exchange, routingKey, convert(payload), at);
	}

	/**
	 * Send a message at a time without waiting for the broker's confirm.
	 * @param exchange the exchange ({@code ""}: the default exchange)
	 * @param routingKey the routing key
	 * @param message the message
	 * @param at not before this time
	 * @return completes when the broker confirmed it; fails with a
	 * {@link DelayedSendException}
	 */
	public CompletableFuture<Void> sendAsync(String exchange, String routingKey, Message message, Instant at) {
		Assert.notNull(exchange, "exchange must not be null");
		Assert.notNull(routingKey, "routingKey must not be null");
		Assert.notNull(message, "message must not be null");
		Assert.notNull(at, "at must not be null");
		AMQP.BasicProperties sent = this.propertiesConverter.fromMessageProperties(message.getMessageProperties(),
				StandardCharsets.UTF_8.name());
		Instant due = ScheduledProperties.dueAt(at);
		ScheduledProperties.Target target = new ScheduledProperties.Target(exchange, routingKey, due);
		return this.hops.forward(ScheduledProperties.entering(sent, target), message.getBody(), due)
			.exceptionallyCompose(
					(failure) -> CompletableFuture.failedFuture(new DelayedSendException(
							"The delayed send to " + describe(exchange, routingKey)
									+ " was not confirmed by the broker: " + cause(failure).getMessage(),
							cause(failure))));
	}

	private Message convert(Object payload) {
		return this.converter.toMessage(payload, new MessageProperties());
	}

	private void await(CompletableFuture<Void> confirmed, String exchange, String routingKey) {
		try {
			confirmed.get(this.confirmWait.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (ExecutionException ex) {
			throw (ex.getCause() instanceof DelayedSendException failure) ? failure : new DelayedSendException(
					"The delayed send to " + describe(exchange, routingKey) + " failed", ex.getCause());
		}
		catch (TimeoutException ex) {
			throw new DelayedSendException(
					"The delayed send to " + describe(exchange, routingKey) + " was not confirmed within "
							+ this.confirmWait.toMillis()
							+ " ms (the broker may block publishers); should the broker confirm it later, it is sent",
					ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new DelayedSendException("Interrupted while waiting for the confirm of the delayed send to "
					+ describe(exchange, routingKey), ex);
		}
	}

	private static Throwable cause(Throwable failure) {
		return (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause() : failure;
	}

	static String describe(String exchange, String routingKey) {
		return (exchange.isEmpty() ? "the default exchange" : "exchange '" + exchange + "'") + " with routing key '"
				+ routingKey + "'";
	}

}
