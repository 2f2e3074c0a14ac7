package io.github.tieredretry.internal.delivery;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.internal.forwarding.ForwardedProperties;
import io.github.tieredretry.internal.headers.HeaderChanges;
import io.github.tieredretry.internal.policy.RetryState;
import io.github.tieredretry.internal.settlement.Acknowledgement;
import io.github.tieredretry.internal.settlement.Forward;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.support.DefaultMessagePropertiesConverter;

/**
 * One delivery of a retryable listener, from its arrival until it is settled: what the
 * listener receives, what the broker delivered, the queue it came from, its retry state
 * there, how it is settled, and how many attempts it has had. A delivery of a batch is
 * one of these like any other: its failure is retried or parked on its own.
 * <p>
 * Its attempts are counted by the thread that runs them: the consumer thread, then the
 * listener thread of an asynchronous result, which the hand-over orders.
 */
public final class Delivery {

	private static final DefaultMessagePropertiesConverter fallbackConverter = new DefaultMessagePropertiesConverter();

	private final Message message;

	private final DeliveryCapture.@Nullable Received received;

	private final String queue;

	private final RetryState state;

	private final Acknowledgement acknowledgement;

	private int attempts;

	/**
	 * Create a delivery.
	 * @param message what the listener receives
	 * @param received what the broker delivered, if captured
	 * @param queue the queue it was consumed from
	 * @param state its retry state on this queue
	 * @param acknowledgement how it is settled
	 */
	Delivery(Message message, DeliveryCapture.@Nullable Received received, String queue, RetryState state,
			Acknowledgement acknowledgement) {
		this.message = message;
		this.received = received;
		this.queue = queue;
		this.state = state;
		this.acknowledgement = acknowledgement;
	}

	Message message() {
		return this.message;
	}

	String queue() {
		return this.queue;
	}

	RetryState state() {
		return this.state;
	}

	Acknowledgement acknowledgement() {
		return this.acknowledgement;
	}

	/**
	 * Count an attempt of the listener on this delivery.
	 * @return the attempts so far, this one included
	 */
	int attempted() {
		return ++this.attempts;
	}

	/**
	 * The delivery is held for the breaker's next probe, which gets the attempts of a
	 * delivery that has just arrived.
	 */
	void heldForProbe() {
		this.attempts = 0;
	}

	/**
	 * The forward that moves this delivery on: the body and properties as the broker
	 * delivered them, with the header changes applied.
	 * @param step why it is forwarded
	 * @param target the queue it is forwarded to
	 * @param changes the header changes
	 * @return the forward
	 */
	Forward forward(Forward.Step step, String target, HeaderChanges changes) {
		AMQP.BasicProperties original = (this.received != null) ? this.received.raw()
				: fallbackConverter.fromMessageProperties(this.message.getMessageProperties(), "UTF-8");
		byte[] capturedBody = (this.received != null) ? this.received.body() : null;
		// The body as the broker delivered it, before after-receive post-processing
		// (decompression, say).
		byte[] body = (capturedBody != null) ? capturedBody : this.message.getBody();
		return new Forward(this.message, this.queue, this.state, step, target,
				ForwardedProperties.of(original, changes), body);
	}

}
