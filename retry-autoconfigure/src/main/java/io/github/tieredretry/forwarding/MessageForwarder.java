package io.github.tieredretry.forwarding;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.topology.RetryTopology;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Sends failed messages on their way: to a delay tier or to the parking lot, each publish confirmed.
 * When the broker returns a forward as unroutable (a tier queue or the parking lot was deleted) or
 * refuses it for a missing exchange, the retry topology is declared again and the forward is tried once more before it counts as failed.
 */
public final class MessageForwarder {

	private static final Log logger = LogFactory.getLog(MessageForwarder.class);

	private final ConfirmedPublisher publisher;

	private final RetryTopology topology;

	private final Runnable redeclareTopology;

	/**
	 * Create a forwarder.
	 * @param publisher the confirmed publisher
	 * @param topology the retry topology
	 * @param redeclareTopology declares the retry topology again
	 */
	public MessageForwarder(ConfirmedPublisher publisher, RetryTopology topology, Runnable redeclareTopology) {
		this.publisher = publisher;
		this.topology = topology;
		this.redeclareTopology = redeclareTopology;
	}

	/**
	 * Forward to the tier named by the properties' {@code retry-tier} header.
	 * @param workQueue the queue the message must come back to (becomes the routing key)
	 * @param properties the properties to publish
	 * @param body the body
	 * @throws ForwardFailedException when the broker did not confirm the forward
	 */
	public void toTier(String workQueue, AMQP.BasicProperties properties, byte[] body) {
		publishHealing(RetryTopology.DELAY_EXCHANGE, workQueue, properties, body);
	}

	/**
	 * Forward to the parking lot.
	 * @param properties the properties to publish
	 * @param body the body
	 * @throws ForwardFailedException when the broker did not confirm the forward
	 */
	public void toParkingLot(AMQP.BasicProperties properties, byte[] body) {
		publishHealing("", this.topology.parkingLot(), properties, body);
	}

	/**
	 * Publish straight to a queue (used to replay parked messages). A queue that does not exist is not
	 * created: the publish is returned and fails.
	 * @param queue the queue
	 * @param properties the properties to publish
	 * @param body the body
	 * @throws ForwardFailedException when the broker did not confirm the publish
	 */
	public void toQueue(String queue, AMQP.BasicProperties properties, byte[] body) {
		this.publisher.publish("", queue, properties, body);
	}

	private void publishHealing(String exchange, String routingKey, AMQP.BasicProperties properties, byte[] body) {
		try {
			this.publisher.publish(exchange, routingKey, properties, body);
		}
		catch (ForwardFailedException ex) {
			if (ex.getKind() != ForwardFailedException.Kind.RETURNED
					&& ex.getKind() != ForwardFailedException.Kind.MISSING_EXCHANGE) {
				throw ex;
			}
			logger.warn("Retry topology is incomplete on the broker (" + ex.getMessage()
					+ "); declaring it again and retrying the forward once");
			try {
				this.redeclareTopology.run();
			}
			catch (RuntimeException redeclareFailure) {
				// A conflicting queue or a lost connection: still a failed forward, so that the caller
				// pauses and requeues instead of letting the container redeliver at once.
				throw new ForwardFailedException(ForwardFailedException.Kind.RETURNED,
						ex.getMessage() + "; declaring the retry topology again failed: "
								+ redeclareFailure.getMessage(),
						redeclareFailure);
			}
			this.publisher.publish(exchange, routingKey, properties, body);
		}
	}

}
