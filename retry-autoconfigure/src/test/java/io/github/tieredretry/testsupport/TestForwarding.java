package io.github.tieredretry.testsupport;

import java.time.Clock;
import java.time.Duration;

import io.github.tieredretry.internal.forwarding.ConfirmedPublisher;
import io.github.tieredretry.internal.forwarding.MessageForwarder;
import io.github.tieredretry.internal.forwarding.PublisherBlockedState;
import io.github.tieredretry.internal.forwarding.RetryExecutors;
import io.github.tieredretry.internal.topology.RetryTopology;

import org.springframework.amqp.rabbit.connection.AbstractConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * The forwarding machinery as the auto-configuration builds it, for tests that use it
 * without an application context: threads, blocked state, confirmed publisher and
 * forwarder. Close it after the test.
 *
 * @param executors the threads
 * @param blockedState whether the broker blocks the publisher connection
 * @param publisher the confirmed publisher
 * @param forwarder the forwarder
 */
public record TestForwarding(RetryExecutors executors, PublisherBlockedState blockedState, ConfirmedPublisher publisher,
		MessageForwarder forwarder) implements AutoCloseable {

	/**
	 * Build it on a connection factory whose channels are in confirm mode.
	 * @param connectionFactory the publisher connection factory
	 * @param confirmTimeout how long to wait for a confirm
	 * @param topology the retry topology (for the parking lot's name)
	 * @return the machinery
	 */
	public static TestForwarding on(ConnectionFactory connectionFactory, Duration confirmTimeout,
			RetryTopology topology) {
		RetryExecutors executors = new RetryExecutors();
		PublisherBlockedState blockedState = new PublisherBlockedState(Clock.systemUTC(), (event) -> {
		});
		if (connectionFactory instanceof AbstractConnectionFactory factory) {
			factory.addConnectionListener(blockedState);
		}
		ConfirmedPublisher publisher = new ConfirmedPublisher(connectionFactory, confirmTimeout, executors,
				blockedState);
		return new TestForwarding(executors, blockedState, publisher, new MessageForwarder(publisher, topology, () -> {
		}, executors));
	}

	@Override
	public void close() {
		this.publisher.close();
		this.executors.close();
	}

}
