package io.github.tieredretry.internal.install;

import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationListener;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.event.ContextClosedEvent;

/**
 * The application's stop, as the starter takes part in it. When the application starts to
 * close, before its listener containers stop, nothing is held or forwarded again any
 * more. Before the connection factory closes its connection (this bean depends on it, and
 * a lifecycle bean's dependents stop first), the retryable containers stop consuming and
 * what is still unacknowledged on their channels goes back with {@code basic.nack}: left
 * to the closing connection, RabbitMQ 4.3 would count those messages as failed
 * deliveries. Spring AMQP's containers report that they stopped before their consumer
 * threads close their channels, and the connection factory stops in the same lifecycle
 * phase.
 */
public final class RetryShutdown implements ApplicationListener<ContextClosedEvent>, SmartLifecycle {

	private final ApplicationContext context;

	private final RetryableListenerInstaller installer;

	private volatile boolean running;

	public RetryShutdown(ApplicationContext context, RetryableListenerInstaller installer) {
		this.context = context;
		this.installer = installer;
	}

	@Override
	public void onApplicationEvent(ContextClosedEvent event) {
		if (event.getApplicationContext() == this.context) {
			this.installer.stopping();
		}
	}

	@Override
	public void start() {
		this.running = true;
	}

	@Override
	public void stop() {
		this.running = false;
		this.installer.stopConsuming();
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

}
