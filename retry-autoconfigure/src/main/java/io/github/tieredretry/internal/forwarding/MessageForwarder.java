package io.github.tieredretry.internal.forwarding;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.topology.RetryTopology;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Sends failed messages on their way: to a delay tier or to the parking lot, each publish
 * confirmed. When the broker returns a forward as unroutable (a tier queue or the parking
 * lot was deleted) or refuses it for a missing exchange, the retry topology is declared
 * again and the forward is tried once more before it counts as failed.
 */
public final class MessageForwarder {

	private static final Log logger = LogFactory.getLog(MessageForwarder.class);

	private final ConfirmedPublisher publisher;

	private final RetryTopology topology;

	private final Runnable redeclareTopology;

	private final RetryExecutors executors;

	/**
	 * Create a forwarder.
	 * @param publisher the confirmed publisher
	 * @param topology the retry topology
	 * @param redeclareTopology declares the retry topology again
	 * @param executors where declaring the topology again runs (it waits for the broker)
	 */
	public MessageForwarder(ConfirmedPublisher publisher, RetryTopology topology, Runnable redeclareTopology,
			RetryExecutors executors) {
		this.publisher = publisher;
		this.topology = topology;
		this.redeclareTopology = redeclareTopology;
		this.executors = executors;
	}

	/**
	 * Publish straight to a queue and wait for the confirm (used to replay parked
	 * messages). A queue that does not exist is not created: the publish is returned and
	 * fails.
	 * @param queue the queue
	 * @param properties the properties to publish
	 * @param body the body
	 * @throws ForwardFailedException when the broker did not confirm the publish
	 */
	public void toQueue(String queue, AMQP.BasicProperties properties, byte[] body) {
		this.publisher.publishAndWait("", queue, properties, body);
	}

	/**
	 * Forward to the tier named by the properties' {@code retry-tier} header, without
	 * waiting for the confirm. The forward names this application's parking lot in its
	 * {@code retry-parking-lot} header: should the work queue be gone when the retry is
	 * due, the broker parks it there, and only there.
	 * @param workQueue the queue the message must come back to (becomes the routing key)
	 * @param properties the properties to publish
	 * @param body the body
	 * @return completes when the broker confirmed; fails with a
	 * {@link ForwardFailedException}
	 */
	public CompletableFuture<Void> toTier(String workQueue, AMQP.BasicProperties properties, byte[] body) {
		return publishHealing(RetryTopology.DELAY_EXCHANGE, workQueue, withParkingLot(properties), body);
	}

	/**
	 * Publish to the exchange the tiers return through, as if the message came out of a
	 * tier now (a delayed send that is due at once), without waiting for the confirm.
	 * Should the queue be gone, the broker parks it in this application's parking lot.
	 * @param queue the queue it goes to (becomes the routing key)
	 * @param properties the properties to publish
	 * @param body the body
	 * @return completes when the broker confirmed; fails with a
	 * {@link ForwardFailedException}
	 */
	public CompletableFuture<Void> toReturn(String queue, AMQP.BasicProperties properties, byte[] body) {
		return publishHealing(RetryTopology.RETURN_EXCHANGE, queue, withParkingLot(properties), body);
	}

	/**
	 * Forward to the parking lot without waiting for the confirm.
	 * @param properties the properties to publish
	 * @param body the body
	 * @return completes when the broker confirmed; fails with a
	 * {@link ForwardFailedException}
	 */
	public CompletableFuture<Void> toParkingLot(AMQP.BasicProperties properties, byte[] body) {
		return publishHealing("", this.topology.parkingLot(), properties, body);
	}

	/**
	 * Whether the broker blocks forwarding now (a resource alarm): forwards wait until it
	 * clears.
	 * @return whether forwards are held
	 */
	public boolean isBlocked() {
		return this.publisher.isBlocked();
	}

	/**
	 * Give up the forwards held while the broker blocks publishing: they fail now (the
	 * application stops), so that their originals go back to their queues.
	 */
	public void releaseHeld() {
		this.publisher.releaseHeld();
	}

	private AMQP.BasicProperties withParkingLot(AMQP.BasicProperties properties) {
		Map<String, Object> received = properties.getHeaders();
		String parkingLot = this.topology.parkingLot();
		// A hop of a message this application forwarded names it already (a LongString
		// once it went through the broker).
		if (received != null && received.get(RetryHeaders.PARKING_LOT) != null
				&& parkingLot.equals(received.get(RetryHeaders.PARKING_LOT).toString())) {
			return properties;
		}
		Map<String, Object> headers = (received != null) ? new LinkedHashMap<>(received) : new LinkedHashMap<>();
		headers.put(RetryHeaders.PARKING_LOT, parkingLot);
		return properties.builder().headers(headers).build();
	}

	private CompletableFuture<Void> publishHealing(String exchange, String routingKey, AMQP.BasicProperties properties,
			byte[] body) {
		return this.publisher.publish(exchange, routingKey, properties, body).exceptionallyCompose((failure) -> {
			Throwable cause = (failure instanceof CompletionException && failure.getCause() != null)
					? failure.getCause() : failure;
			if (!(cause instanceof ForwardFailedException ex) || (ex.getKind() != ForwardFailedException.Kind.RETURNED
					&& ex.getKind() != ForwardFailedException.Kind.MISSING_EXCHANGE)) {
				return CompletableFuture.failedFuture(cause);
			}
			// Declaring the topology waits for the broker: on the maintenance thread,
			// never on the I/O thread.
			return CompletableFuture
				.supplyAsync(() -> healAndPublishAgain(ex, exchange, routingKey, properties, body),
						this.executors.maintenance())
				.thenCompose((next) -> next);
		});
	}

	private CompletableFuture<Void> healAndPublishAgain(ForwardFailedException failure, String exchange,
			String routingKey, AMQP.BasicProperties properties, byte[] body) {
		logger.warn("Retry topology is incomplete on the broker (" + failure.getMessage()
				+ "); declaring it again and retrying the forward once");
		try {
			this.redeclareTopology.run();
		}
		catch (RuntimeException redeclareFailure) {
			return CompletableFuture.failedFuture(new ForwardFailedException(failure.getKind(), failure.getMessage()
					+ "; declaring the retry topology again failed: " + redeclareFailure.getMessage(),
					redeclareFailure));
		}
		return this.publisher.publish(exchange, routingKey, properties, body);
	}

}
