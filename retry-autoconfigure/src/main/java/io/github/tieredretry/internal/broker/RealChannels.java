package io.github.tieredretry.internal.broker;

import java.io.IOException;
import java.util.concurrent.TimeoutException;

import com.rabbitmq.client.Channel;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.rabbit.connection.ChannelProxy;
import org.springframework.amqp.rabbit.connection.RabbitUtils;

/**
 * The real channel behind Spring's cached-channel proxy, and how to let go of it.
 * <p>
 * Once its channel has died, the proxy silently opens a new one on the next call. For a
 * publish that then waits for its confirm, an ack of a delivery tag, or a
 * {@code basic.get} whose messages are acked later, that swap is wrong: the confirm wait
 * finds nothing outstanding and reports success, the ack settles another message. Every
 * step of such an operation must run on the real channel it started on, where a dead
 * channel fails instead.
 */
public final class RealChannels {

	private RealChannels() {
	}

	/**
	 * The channel every call must go to.
	 * @param channel a channel, possibly a cached-channel proxy
	 * @return the proxy's current target, or the channel itself
	 */
	public static Channel target(Channel channel) {
		return (channel instanceof ChannelProxy proxy) ? proxy.getTargetChannel() : channel;
	}

	/**
	 * Close a cached channel for good rather than returning it to the cache (its state is
	 * unknown: a late confirm, unacknowledged deliveries). Closing waits for the broker's
	 * reply: never on a thread that must not block.
	 * @param channel the channel (a cached-channel proxy or a plain channel), or
	 * {@code null}
	 */
	public static void closeForGood(@Nullable Channel channel) {
		if (channel == null) {
			return;
		}
		RabbitUtils.setPhysicalCloseRequired(channel, true);
		try {
			channel.close();
		}
		catch (IOException | TimeoutException | RuntimeException ex) {
			// Closed already, or the connection is gone: the channel is unusable either
			// way.
		}
		finally {
			RabbitUtils.setPhysicalCloseRequired(channel, false);
		}
	}

	/**
	 * Give a cached channel back to the cache; a closed one is discarded by the cache.
	 * @param channel the channel
	 */
	public static void release(Channel channel) {
		try {
			channel.close();
		}
		catch (IOException | TimeoutException | RuntimeException ex) {
			// The cache discards a channel it cannot keep.
		}
	}

}
