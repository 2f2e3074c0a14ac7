package io.github.tieredretry.forwarding;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.topology.RetryTopology;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Sends failed messages on their way: to a delay tier or to the parking lot, each publish confirmed.
 * When the broker returns a forward as unroutable (a tier queue or the parking lot was deleted) or
 * refuses it for a missing exchange, the retry topology is declared again and the forward is tried once more before it counts as failed.
 */
public final class MessageForwarder implements AutoCloseable {

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
	 * Release the publisher's completion thread (forwards are no longer started once the listener
	 * containers have stopped).
	 */
	@Override
	public void close() {
		this.publisher.close();
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

	/**
	 * Forward to the tier named by the properties' {@code retry-tier} header, without waiting for the
	 * confirm.
	 * @param workQueue the queue the message must come back to (becomes the routing key)
	 * @param properties the properties to publish
	 * @param body the body
	 * @return completes when the broker confirmed; fails with a {@link ForwardFailedException}
	 */
	public CompletableFuture<Void> toTier(String workQueue, AMQP.BasicProperties properties, byte[] body) {
		return publishHealingAsync(RetryTopology.DELAY_EXCHANGE, workQueue, properties, body);
	}

	/**
	 * Forward to the parking lot without waiting for the confirm.
	 * @param properties the properties to publish
	 * @param body the body
	 * @return completes when the broker confirmed; fails with a {@link ForwardFailedException}
	 */
	public CompletableFuture<Void> toParkingLot(AMQP.BasicProperties properties, byte[] body) {
		return publishHealingAsync("", this.topology.parkingLot(), properties, body);
	}

	private CompletableFuture<Void> publishHealingAsync(String exchange, String routingKey,
			AMQP.BasicProperties properties, byte[] body) {
		// Declaring the topology waits for the broker: on a follow-up thread, never on the I/O thread.
		return this.publisher.publishAsync(exchange, routingKey, properties, body).handleAsync((ok, failure) -> {
			if (failure == null) {
				return CompletableFuture.<Void>completedFuture(null);
			}
			if (!(failure instanceof ForwardFailedException ex)
					|| (ex.getKind() != ForwardFailedException.Kind.RETURNED
							&& ex.getKind() != ForwardFailedException.Kind.MISSING_EXCHANGE)) {
				return CompletableFuture.<Void>failedFuture(failure);
			}
			logger.warn("Retry topology is incomplete on the broker (" + ex.getMessage()
					+ "); declaring it again and retrying the forward once");
			try {
				this.redeclareTopology.run();
			}
			catch (RuntimeException redeclareFailure) {
				return CompletableFuture.<Void>failedFuture(new ForwardFailedException(
						ForwardFailedException.Kind.RETURNED, ex.getMessage()
								+ "; declaring the retry topology again failed: " + redeclareFailure.getMessage(),
						redeclareFailure));
			}
			return this.publisher.publishAsync(exchange, routingKey, properties, body);
		}, this.publisher.followUps()).thenCompose((next) -> next);
	}

	/**
	 * Where to run what follows a forward's completion (acks, events): it may block.
	 * @return the executor
	 */
	public Executor followUps() {
		return this.publisher.followUps();
	}

	/**
	 * Run a task later on a follow-up thread.
	 * @param task the task
	 * @param delayMillis the delay
	 * @throws java.util.concurrent.RejectedExecutionException once the forwarder is closed
	 */
	public void schedule(Runnable task, long delayMillis) {
		this.publisher.schedule(task, delayMillis);
	}
}
