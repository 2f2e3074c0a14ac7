package io.github.tieredretry.internal.settlement;

import java.util.concurrent.atomic.AtomicBoolean;

import com.rabbitmq.client.amqp.Consumer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * A delivery of the RabbitMQ AMQP 1.0 client, settled through its consumer context:
 * {@code accepted} once processed or forwarded, {@code released} to give it back (which
 * no RabbitMQ version counts towards a delivery limit).
 */
public final class AmqpSettlement implements Settlement {

	private static final Log logger = LogFactory.getLog(AmqpSettlement.class);

	private final Consumer.Context context;

	private final Object consumer;

	private final AtomicBoolean done = new AtomicBoolean();

	/**
	 * Create the settlement of one delivery.
	 * @param context the delivery's context
	 * @param consumer the listener that received it
	 */
	public AmqpSettlement(Consumer.Context context, Object consumer) {
		this.context = context;
		this.consumer = consumer;
	}

	@Override
	public void ack() {
		if (this.done.compareAndSet(false, true)) {
			settle("accept", this.context::accept);
		}
	}

	@Override
	public void requeue() {
		if (this.done.compareAndSet(false, true)) {
			settle("release", this.context::requeue);
		}
	}

	@Override
	public void leaveToChannel() {
		// The AMQP 1.0 container waits at its stop until every delivery is settled: a
		// held message is released now, and the container has drained its credit.
		requeue();
	}

	@Override
	public boolean isChannelOpen() {
		return !this.done.get();
	}

	@Override
	public boolean mayRequeue() {
		return true;
	}

	@Override
	public Object consumer() {
		return this.consumer;
	}

	private void settle(String outcome, Runnable settlement) {
		try {
			settlement.run();
		}
		catch (RuntimeException ex) {
			// The link closed: the broker has the message back already.
			logger.debug("Could not " + outcome + " a delivery: its link is closed", ex);
		}
	}

}
