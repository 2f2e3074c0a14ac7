package io.github.tieredretry.delayedsend;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessagePostProcessor;

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
public interface DelayedSender {

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
	void send(String exchange, String routingKey, Message message, Duration delay);

	/**
	 * Send a message at a time.
	 * @param exchange the exchange ({@code ""}: the default exchange)
	 * @param routingKey the routing key
	 * @param message the message
	 * @param at not before this time; a time that has passed sends at once
	 * @throws DelayedSendException when the broker did not confirm it (not scheduled,
	 * unless only the confirm was lost: see {@link DelayedSendException})
	 */
	void send(String exchange, String routingKey, Message message, Instant at);

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
	void convertAndSend(String exchange, String routingKey, Object payload, Duration delay);

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
	void convertAndSend(String exchange, String routingKey, Object payload, MessagePostProcessor postProcessor,
			Duration delay);

	/**
	 * Convert a payload and send it at a time.
	 * @param exchange the exchange
	 * @param routingKey the routing key
	 * @param payload the payload
	 * @param at not before this time
	 * @throws DelayedSendException when the broker did not confirm it (not scheduled,
	 * unless only the confirm was lost: see {@link DelayedSendException})
	 */
	void convertAndSend(String exchange, String routingKey, Object payload, Instant at);

	/**
	 * Send a message at a time without waiting for the broker's confirm.
	 * @param exchange the exchange ({@code ""}: the default exchange)
	 * @param routingKey the routing key
	 * @param message the message
	 * @param at not before this time
	 * @return completes when the broker confirmed it; fails with a
	 * {@link DelayedSendException}
	 */
	CompletableFuture<Void> sendAsync(String exchange, String routingKey, Message message, Instant at);

}
