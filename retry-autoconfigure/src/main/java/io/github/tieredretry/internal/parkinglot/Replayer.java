package io.github.tieredretry.internal.parkinglot;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.internal.forwarding.ForwardFailedException;

/**
 * Publishes a replayed message to its origin queue and waits for the broker's confirm.
 */
@FunctionalInterface
public interface Replayer {

	/**
	 * Publish.
	 * @param queue the origin queue
	 * @param properties the properties
	 * @param body the body
	 * @throws ForwardFailedException when the publish was returned, nacked, blocked or
	 * not confirmed
	 */
	void publish(String queue, AMQP.BasicProperties properties, byte[] body);

}
