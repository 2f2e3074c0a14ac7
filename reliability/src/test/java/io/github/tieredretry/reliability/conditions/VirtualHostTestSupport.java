package io.github.tieredretry.reliability.conditions;

import com.rabbitmq.client.Connection;
import io.github.tieredretry.testbrokers.HarnessBroker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the test classes whose every test works in a virtual host of its own on this
 * package's node share: the node, the virtual host, a connection to it, and whether the
 * node has RabbitMQ 4.3's delayed retry.
 */
abstract class VirtualHostTestSupport {

	private final String purpose;

	HarnessBroker broker;

	String vhost;

	Connection connection;

	boolean delayedRetry;

	/**
	 * @param purpose what the virtual hosts are for, part of their names and of the
	 * connection's
	 */
	VirtualHostTestSupport(String purpose) {
		this.purpose = purpose;
	}

	@BeforeEach
	void virtualHost() {
		this.broker = ConditionsBroker.get();
		this.vhost = ConditionsBroker.newVirtualHost(this.purpose);
		this.connection = this.broker.connect(this.vhost, this.purpose);
		this.delayedRetry = ConditionsBroker.hasDelayedRetry(this.connection);
	}

	@AfterEach
	void disconnect() {
		this.connection.abort();
	}

}
