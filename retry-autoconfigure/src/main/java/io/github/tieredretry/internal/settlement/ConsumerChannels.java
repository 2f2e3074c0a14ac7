package io.github.tieredretry.internal.settlement;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;

import com.rabbitmq.client.Channel;
import io.github.tieredretry.internal.broker.RealChannels;
import io.github.tieredretry.policy.DurationText;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.context.Lifecycle;
import org.springframework.util.ClassUtils;

/**
 * The channels one retryable container consumes on, and what the starter has not settled
 * on each of them yet.
 * <p>
 * A stop is not a failure. RabbitMQ 4.3 counts a {@code basic.reject} and a channel that
 * closes with unacknowledged messages as failed deliveries of a quorum queue's messages
 * ({@code x-delivery-count}: the broker backend's retry count, and what a delivery limit
 * spends), and a {@code basic.nack} with requeue not. A container that stops gives its
 * prefetched messages back with a reject each (Spring AMQP's simple container, since it
 * settles deliveries one by one) and closes its channels with whatever the starter still
 * holds. The container therefore consumes on channels of {@link #decorate decorated}
 * connection factory, which give every message back uncounted:
 * <ul>
 * <li>the container's {@code basic.reject} with requeue becomes a {@code basic.nack} with
 * requeue;</li>
 * <li>before the container gives several back at once (a {@code basic.nack} with
 * {@code multiple}, which would also settle what the starter holds) and before it cancels
 * its consumer or closes the channel, the messages the starter holds through a pause go
 * back, and forwards in flight get up to the container's shutdown timeout to be confirmed
 * and acked;</li>
 * <li>before the channel closes, whatever is still unacknowledged on it goes back with
 * one {@code basic.nack} of every outstanding delivery (tag 0, multiple).</li>
 * </ul>
 * On RabbitMQ 4.0 to 4.2 every return counts; there a stop costs each message it gives
 * back one count, as before.
 */
public final class ConsumerChannels {

	private static final Log logger = LogFactory.getLog(ConsumerChannels.class);

	/**
	 * The unsettled deliveries of each real channel; a closed channel's entry goes with
	 * it.
	 */
	private final Map<Channel, OutstandingDeliveries> outstanding = Collections.synchronizedMap(new WeakHashMap<>());

	/** The channels handed to the container, while it uses them. */
	private final Set<Channel> decorated = Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));

	private final HeldMessages heldMessages;

	private final Duration settleTimeout;

	private final Lifecycle container;

	private final Duration ackDeferral;

	/**
	 * Create the channels of one container.
	 * @param container the container
	 * @param heldMessages the messages held through a pause
	 * @param settleTimeout how long forwards in flight may take to be settled before the
	 * container gives their messages back
	 */
	public ConsumerChannels(Lifecycle container, HeldMessages heldMessages, Duration settleTimeout) {
		this(container, heldMessages, settleTimeout, OutstandingDeliveries.ACK_DEFERRAL);
	}

	/**
	 * Create the channels of one container.
	 * @param container the container
	 * @param heldMessages the messages held through a pause
	 * @param settleTimeout how long forwards in flight may take to be settled before the
	 * container gives their messages back
	 * @param ackDeferral how long processed deliveries wait for an earlier outstanding
	 * one, to be acked with it (see {@link OutstandingDeliveries})
	 */
	public ConsumerChannels(Lifecycle container, HeldMessages heldMessages, Duration settleTimeout,
			Duration ackDeferral) {
		this.ackDeferral = ackDeferral;
		this.container = container;
		this.heldMessages = heldMessages;
		this.settleTimeout = settleTimeout;
	}

	/**
	 * The unsettled deliveries of the channel a message arrived on.
	 * @param channel the channel as the container exposes it
	 * @return its deliveries that the starter has not settled yet
	 */
	public OutstandingDeliveries of(Channel channel) {
		return this.outstanding.computeIfAbsent(RealChannels.target(channel),
				(real) -> new OutstandingDeliveries(this.heldMessages::later, this.ackDeferral));
	}

	/**
	 * A connection factory whose channels give messages back without the broker counting
	 * them as failed, for the container to consume on.
	 * @param connectionFactory the container's connection factory
	 * @return the decorated factory
	 */
	public ConnectionFactory decorate(ConnectionFactory connectionFactory) {
		return proxy(ConnectionFactory.class, new Class<?>[] { ConnectionFactory.class }, (method, arguments) -> {
			Object result = invoke(connectionFactory, method, arguments);
			return (result instanceof Connection connection && method.getName().equals("createConnection"))
					? decorate(connection) : result;
		});
	}

	private Connection decorate(Connection connection) {
		return proxy(Connection.class, new Class<?>[] { Connection.class }, (method, arguments) -> {
			Object result = invoke(connection, method, arguments);
			return (result instanceof Channel channel && method.getName().equals("createChannel")) ? decorate(channel)
					: result;
		});
	}

	private Channel decorate(Channel channel) {
		// With every interface of the channel it decorates: a cached channel is also a
		// ChannelProxy, which the container and RealChannels unwrap.
		Channel decorated = proxy(Channel.class, ClassUtils.getAllInterfaces(channel),
				(method, arguments) -> switch (method.getName()) {
					case "basicReject" -> reject(channel, method, arguments);
					case "basicNack" -> nack(channel, method, arguments);
					case "basicCancel" -> {
						Object result = invoke(channel, method, arguments);
						this.heldMessages.giveBack(RealChannels.target(channel));
						yield result;
					}
					case "close" -> {
						closing(RealChannels.target(channel));
						yield invoke(channel, method, arguments);
					}
					default -> invoke(channel, method, arguments);
				});
		this.decorated.add(decorated);
		return decorated;
	}

	/**
	 * The application is about to close its connections: the container stops consuming,
	 * and every channel still open gives back what is unacknowledged on it. A container
	 * reports that it stopped before its consumer threads have closed their channels, and
	 * the connection factory closes its connection in the same lifecycle phase: a closing
	 * connection puts the messages back counted on RabbitMQ 4.3.
	 */
	public void stopConsumingAndGiveBackAll() {
		if (this.container.isRunning()) {
			this.container.stop();
		}
		List<Channel> channels;
		synchronized (this.decorated) {
			channels = new ArrayList<>(this.decorated);
		}
		for (Channel channel : channels) {
			closing(RealChannels.target(channel));
		}
	}

	// The container gives a message back with basic.reject only when it stops (the
	// starter settles everything else itself): as a nack, which RabbitMQ 4.3 does not
	// count.
	private @Nullable Object reject(Channel channel, Method method, @Nullable Object[] arguments) throws Throwable {
		if (arguments != null && arguments.length == 2 && Boolean.TRUE.equals(arguments[1])) {
			channel.basicNack((Long) arguments[0], false, true);
			return null;
		}
		return invoke(channel, method, arguments);
	}

	// A multiple nack from the container (a consumer-side batch it rejects while
	// stopping) would also settle what the starter holds: those are settled first.
	private @Nullable Object nack(Channel channel, Method method, @Nullable Object[] arguments) throws Throwable {
		if (arguments != null && arguments.length == 3 && Boolean.TRUE.equals(arguments[1])) {
			Channel real = RealChannels.target(channel);
			this.heldMessages.giveBack(real);
			awaitSettled(real);
		}
		return invoke(channel, method, arguments);
	}

	private void closing(@Nullable Channel real) {
		if (real == null) {
			// Closed for good already (a cached channel's target is gone).
			return;
		}
		this.heldMessages.giveBack(real);
		if (!real.isOpen()) {
			return;
		}
		awaitSettled(real);
		try {
			// Delivery tag 0 with multiple: every delivery still unacknowledged on the
			// channel, including those the container prefetched and never handed over.
			real.basicNack(0, true, true);
		}
		catch (IOException | RuntimeException ex) {
			logger.debug("Could not give back the unacknowledged messages of a closing consumer channel", ex);
		}
	}

	private void awaitSettled(Channel real) {
		OutstandingDeliveries deliveries = this.outstanding.get(real);
		if (deliveries == null) {
			return;
		}
		try {
			if (!deliveries.awaitNone(this.settleTimeout)) {
				logger.info("A consumer channel is closing with " + deliveries.size() + " messages still unsettled "
						+ "after " + DurationText.of(this.settleTimeout) + "; they go back to their queue");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static boolean isObjectMethod(Method method) {
		return method.getDeclaringClass() == Object.class;
	}

	// Identity: the container uses its connection factory as a key (resource binding).
	private static @Nullable Object objectMethod(Object proxy, Method method, @Nullable Object[] arguments) {
		return switch (method.getName()) {
			case "equals" -> arguments != null && proxy == arguments[0];
			case "hashCode" -> System.identityHashCode(proxy);
			default -> "retry-settled " + proxy.getClass().getInterfaces()[0].getSimpleName() + "@"
					+ Integer.toHexString(System.identityHashCode(proxy));
		};
	}

	/** The part of a decoration that differs per type. */
	@FunctionalInterface
	private interface Decoration {

		@Nullable Object call(Method method, @Nullable Object[] arguments) throws Throwable;

	}

	private static <T> T proxy(Class<T> type, Class<?>[] interfaces, Decoration decoration) {
		return type.cast(Proxy.newProxyInstance(ConsumerChannels.class.getClassLoader(), interfaces,
				(proxy, method, arguments) -> isObjectMethod(method) ? objectMethod(proxy, method, arguments)
						: decoration.call(method, arguments)));
	}

	private static @Nullable Object invoke(Object target, Method method, @Nullable Object[] arguments)
			throws Throwable {
		try {
			return method.invoke(target, arguments);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

}
