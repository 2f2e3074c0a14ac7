package io.github.tieredretry.listener;

import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextClosedEvent;

/**
 * When the application starts to close, and before its listener containers stop, puts
 * back every message that waits for a pause to end or for a blocked publisher, with
 * {@code basic.nack}: left to the closing channels, RabbitMQ 4.3 would count them as
 * failed deliveries.
 */
public final class RetryShutdown implements ApplicationListener<ContextClosedEvent> {

	private final ApplicationContext context;

	private final RetryableListenerInstaller installer;

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

}
