package io.github.tieredretry.internal.delayedsend;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.delayedsend.DelayedSendException;
import io.github.tieredretry.delayedsend.DelayedSender;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessagePostProcessor;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.support.DefaultMessagePropertiesConverter;
import org.springframework.amqp.rabbit.support.MessagePropertiesConverter;
import org.springframework.amqp.support.converter.MessageConverter;
import org.springframework.util.Assert;

/**
 * The {@link DelayedSender} of the starter: one confirmed publish into the tier that
 * {@code TierLadder.tierFor} picks, then {@link ScheduledDeliveries} moves it on.
 */
public final class DefaultDelayedSender implements DelayedSender {

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
	public DefaultDelayedSender(ScheduledHops hops, MessageConverter converter, Duration confirmWait) {
		this.hops = hops;
		this.converter = converter;
		this.confirmWait = confirmWait;
	}

	@Override
	public void send(String exchange, String routingKey, Message message, Duration delay) {
		Assert.notNull(delay, "delay must not be null");
		Assert.isTrue(!delay.isNegative(), () -> "delay must not be negative, but is " + delay);
		send(exchange, routingKey, message, this.hops.clock().instant().plus(delay));
	}

	@Override
	public void send(String exchange, String routingKey, Message message, Instant at) {
		await(sendAsync(exchange, routingKey, message, at), exchange, routingKey);
	}

	@Override
	public void convertAndSend(String exchange, String routingKey, Object payload, Duration delay) {
		convertAndSend(exchange, routingKey, payload, (message) -> message, delay);
	}

	@Override
	public void convertAndSend(String exchange, String routingKey, Object payload, MessagePostProcessor postProcessor,
			Duration delay) {
		send(exchange, routingKey, postProcessor.postProcessMessage(convert(payload)), delay);
	}

	@Override
	public void convertAndSend(String exchange, String routingKey, Object payload, Instant at) {
		send(exchange, routingKey, convert(payload), at);
	}

	@Override
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
