package io.github.tieredretry.reliability;

import java.util.Map;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The two {@link TcpProxy proxies} of a {@link ProxiedApplication}, new for each test and
 * closed after it: one for the listener containers' connection and one for the forwarding
 * publisher's. Register it as an instance field with {@code @RegisterExtension}.
 */
final class BrokerProxies implements BeforeEachCallback, AfterEachCallback {

	private TcpProxy consumer;

	private TcpProxy publisher;

	@Override
	public void beforeEach(ExtensionContext context) {
		this.consumer = TcpProxy.toTestBroker();
		this.publisher = TcpProxy.toTestBroker();
	}

	@Override
	public void afterEach(ExtensionContext context) {
		this.consumer.close();
		this.publisher.close();
	}

	/**
	 * Start the application with its forwards through the publisher proxy.
	 * @param properties test and {@code retry.*} properties
	 * @return the running application
	 */
	ProxiedApplication start(Map<String, Object> properties) {
		return ProxiedApplication.start(this.consumer, this.publisher, properties);
	}

	/**
	 * Start the application with its forwards on its own connection settings, through the
	 * consumer proxy.
	 * @param properties test and {@code retry.*} properties
	 * @return the running application
	 */
	ProxiedApplication startThroughTheConsumerProxy(Map<String, Object> properties) {
		return ProxiedApplication.start(this.consumer, null, properties);
	}

	/**
	 * The proxy of the application's own connection (its listener containers).
	 * @return the proxy
	 */
	TcpProxy consumer() {
		return this.consumer;
	}

	/**
	 * The proxy of the forwarding connection.
	 * @return the proxy
	 */
	TcpProxy publisher() {
		return this.publisher;
	}

}
