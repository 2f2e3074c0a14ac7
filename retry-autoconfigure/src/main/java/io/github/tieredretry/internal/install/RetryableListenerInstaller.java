package io.github.tieredretry.internal.install;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.tieredretry.annotation.Backend;
import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.internal.delivery.DeliveryOutcomes;
import io.github.tieredretry.internal.delivery.InvocationCapture;
import io.github.tieredretry.internal.delivery.ListenerRuntime;
import io.github.tieredretry.internal.delivery.RetryingBatchMessageListener;
import io.github.tieredretry.internal.delivery.RetryingMessageListener;
import io.github.tieredretry.internal.policy.BrokerDelayedRetry;
import io.github.tieredretry.internal.policy.RetryDecider;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.internal.settlement.ConsumerChannels;
import io.github.tieredretry.internal.settlement.ForwardSender;
import io.github.tieredretry.internal.settlement.ForwardSenders;
import io.github.tieredretry.internal.settlement.RetryNotifications;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.listener.ListenerBackend;
import io.github.tieredretry.listener.ListenerGate;
import io.github.tieredretry.listener.ListenerGates;
import io.github.tieredretry.listener.RetryableListenerConfigurationException;
import io.github.tieredretry.listener.RetryableListenerInfo;
import io.github.tieredretry.listener.RetryableListenerRegistry;
import io.github.tieredretry.policy.BreakerSettings;
import io.github.tieredretry.policy.EffectiveRetryPolicy;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.amqp.core.BatchMessageListener;
import org.springframework.amqp.core.MessageListener;
import org.springframework.amqp.core.MessageListenerContainer;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.batch.SimpleBatchingStrategy;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.connection.RoutingConnectionFactory;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.MethodRabbitListenerEndpoint;
import org.springframework.amqp.rabbit.listener.MultiMethodRabbitListenerEndpoint;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpoint;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareBatchMessageListener;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.DirectFieldAccessor;
import org.springframework.util.ClassUtils;

/**
 * Applies {@code @RetryableListener} to a listener container as its factory creates it:
 * checks that the container can be retried safely, wraps its listener, captures
 * deliveries, and registers the container's queues so that their retries can return to
 * them.
 */
public final class RetryableListenerInstaller {

	private static final Log logger = LogFactory.getLog(RetryableListenerInstaller.class);

	/** How long stopping waits for attempts of asynchronous listeners still running. */
	private static final Duration STOPPING_WAIT = Duration.ofSeconds(5);

	private final ListenerPolicies policies;

	private final TierLadder tiers;

	private final RetryTopology topology;

	private final ForwardSenders senders;

	private final ListenerRuntime runtime;

	private final RetryableListenerRegistry registry;

	private final ListenerGates gates;

	private final RetryBackends backends;

	private final DeclaredQueues declaredQueues;

	private final DelayNotices delayNotices;

	private final Duration asyncAttemptTimeout;

	private final List<ConsumerChannels> consumerChannels = new CopyOnWriteArrayList<>();

	/**
	 * Create the installer.
	 * @param policies resolves listener policies
	 * @param topology the retry topology (work queues are registered on it)
	 * @param senders makes each listener's forwarding path
	 * @param runtime what the delivery path of every listener shares
	 * @param registry records the listeners retries were applied to
	 * @param gates creates each listener's circuit breaker, if it has one
	 * @param backends chooses each listener's backend once the broker's version is known
	 * @param declaredQueues the application's queue beans
	 * @param asyncAttemptTimeout how long an attempt of an asynchronous listener may take
	 */
	public RetryableListenerInstaller(ListenerPolicies policies, RetryTopology topology, ForwardSenders senders,
			ListenerRuntime runtime, RetryableListenerRegistry registry, ListenerGates gates, RetryBackends backends,
			DeclaredQueues declaredQueues, Duration asyncAttemptTimeout) {
		this.policies = policies;
		this.tiers = topology.tiers();
		this.topology = topology;
		this.senders = senders;
		this.runtime = runtime;
		this.asyncAttemptTimeout = asyncAttemptTimeout;
		this.registry = registry;
		this.gates = gates;
		this.backends = backends;
		this.declaredQueues = declaredQueues;
		this.delayNotices = new DelayNotices(this.tiers);
	}

	/**
	 * Apply tiered retries to a freshly created container if its endpoint is a retryable
	 * listener.
	 * @param endpoint the endpoint the container was created for
	 * @param container the container, not yet initialized
	 * @param factory the factory that created it
	 */
	public void install(RabbitListenerEndpoint endpoint, MessageListenerContainer container, Object factory) {
		if (!(endpoint instanceof MethodRabbitListenerEndpoint methodEndpoint)) {
			return;
		}
		Object bean = methodEndpoint.getBean();
		Class<?> beanClass = AopUtils.getTargetClass(bean);
		Method method = (endpoint instanceof MultiMethodRabbitListenerEndpoint) ? null
				: ListenerShapes.specificMethod(methodEndpoint.getMethod(), beanClass);
		String listener = ClassUtils.getShortName(beanClass) + ((method != null) ? "#" + method.getName() : "");
		RetryableListener annotation = ListenerShapes.findAnnotation(beanClass, method, listener);
		if (annotation == null) {
			return;
		}
		List<Method> handlers = (method != null) ? List.of(method) : ListenerShapes.rabbitHandlers(beanClass);
		if (ListenerShapes.isAmqpClientContainer(container)) {
			EffectiveRetryPolicy policy = AmqpListenerInstallation.install(listener, handlers, annotation, beanClass,
					method, container, this.policies, this.topology, this.senders, this.runtime, this.backends,
					this.registry);
			logger.info("Tiered retries for " + listener + " (RabbitMQ AMQP 1.0 client): " + policy + ", tiers "
					+ this.tiers);
			return;
		}
		boolean batch = ListenerShapes.checkSupported(listener, beanClass, handlers, endpoint, container, factory);
		boolean async = handlers.stream().anyMatch(ListenerShapes::isAsync);
		AbstractMessageListenerContainer listenerContainer = (AbstractMessageListenerContainer) container;
		EffectiveRetryPolicy policy = this.policies.resolve(annotation, listener);
		MessageListener original = listenerContainer.getMessageListener();
		if (original == null) {
			throw new RetryableListenerConfigurationException(listener, "its container has no message listener",
					"This is unexpected for a @RabbitListener; please report it.");
		}
		RetryNotifications notifications = this.senders.notificationsFor(listener, policy.maxRetries());
		ForwardSender sender = this.senders.senderFor(notifications, holdLimit(listenerContainer));
		List<String> queues = Arrays.asList(listenerContainer.getQueueNames());
		BreakerSettings breaker = this.policies.resolveBreaker(annotation, listener);
		ListenerGate gate = this.gates.gateFor(listener, queues, breaker);
		RetryableListenerInfo info = new RetryableListenerInfo(listener, listenerContainer.getListenerId(), queues,
				annotation.policy().trim(), policy, beanClass, method);
		Backend requested = this.policies.resolveBackend(annotation);
		ListenerBackend backend = new ListenerBackend(listener, requested, policy,
				queues.stream().map((queue) -> this.declaredQueues.facts(queue, listener, policy, requested)).toList());
		List<String> notices = this.delayNotices.forInexactDelays(listener, policy);
		if (requested == Backend.TIERS || policy.jitter() > 0 || BrokerDelayedRetry.producing(policy) == null) {
			// The tiers run whatever the broker: said now.
			notices.forEach(logger::info);
		}
		else {
			// Said once the broker's version is known, if the tiers run.
			backend.onTheTiersNotice(notices);
		}
		this.backends.register(backend);
		InvocationCapture invocations = (async || batch) ? InvocationCapture.install(original) : null;
		if (async && invocations == null) {
			throw new RetryableListenerConfigurationException(listener,
					"its asynchronous results cannot be followed (its container's listener is "
							+ original.getClass().getName() + ")",
					"Asynchronous retryable listeners need Spring AMQP's adapter of a @RabbitListener method.");
		}
		if (batch && !(original instanceof ChannelAwareBatchMessageListener
				|| original instanceof BatchMessageListener)) {
			throw new RetryableListenerConfigurationException(listener,
					"its container delivers batches, but its listener " + original.getClass().getName()
							+ " takes single messages",
					"Declare the method with a List parameter and @RabbitListener(batch = \"true\").");
		}
		DeliveryOutcomes outcomes = new DeliveryOutcomes(info, new RetryDecider(this.tiers, policy), this.runtime,
				sender, notifications, gate, backend);
		ConsumerChannels channels = new ConsumerChannels(listenerContainer, this.senders.heldMessages(),
				shutdownTimeout(listenerContainer));
		this.consumerChannels.add(channels);
		listenerContainer
			.setMessageListener(batch ? new RetryingBatchMessageListener(original, outcomes, channels, invocations)
					: new RetryingMessageListener(original, outcomes, channels, invocations));
		consumeOnDecoratedChannels(listener, listenerContainer, channels);
		// A producer-side batch must reach the wrapper as the one delivery it is (and is
		// then parked): the container splits none, not even for consumer-side batching,
		// which turns its splitting on when it starts.
		listenerContainer.setDeBatchingEnabled(false);
		listenerContainer.setBatchingStrategy(new ProducerBatchesKeptWhole());
		listenerContainer.setMessagePropertiesConverter(this.runtime.capture().converter());
		listenerContainer.addAfterReceivePostProcessors(this.runtime.capture().bodyCapture());
		queues.forEach(this.topology::registerWorkQueue);
		this.registry.applied(info, listenerContainer);
		if (logger.isInfoEnabled()) {
			String shape = (batch ? "batch " : "") + (async ? "asynchronous " : "");
			logger.info("Tiered retries for " + shape + listener + " on " + queues + ": " + policy + ", tiers "
					+ this.tiers + ", " + breaker.describe());
		}
	}

	/**
	 * The application stops, before its listener containers do: nothing is held or
	 * forwarded again any more, forwards held while the broker blocks publishing give up,
	 * and a paused listener's consumers stop waiting. What is not settled is left to the
	 * consumer channels, which give it back uncounted when their containers stop
	 * consuming (see {@link ConsumerChannels}); given back now, a message could come back
	 * to a consumer that has not stopped yet.
	 */
	public void stopping() {
		// Asynchronous attempts still running get a moment to end; those that do not are
		// cancelled, their messages left to their channels with the held messages.
		this.runtime.async()
			.stopping(
					(this.asyncAttemptTimeout.compareTo(STOPPING_WAIT) < 0) ? this.asyncAttemptTimeout : STOPPING_WAIT);
		this.gates.stopping();
		this.senders.stopping();
	}

	/**
	 * The application is about to close its connections: the retryable containers stop
	 * consuming (if they have not yet), and what is still unacknowledged on their
	 * channels goes back now, uncounted, rather than with the closing connection.
	 */
	public void stopConsuming() {
		this.consumerChannels.forEach(ConsumerChannels::stopConsumingAndGiveBackAll);
	}

	// A stop is not a failure: the container consumes on channels that give its messages
	// back uncounted (see ConsumerChannels). A routing connection factory chooses its
	// target per call and is left alone.
	private static void consumeOnDecoratedChannels(String listener, AbstractMessageListenerContainer container,
			ConsumerChannels channels) {
		Object connectionFactory = new DirectFieldAccessor(container).getPropertyValue("connectionFactory");
		if (connectionFactory instanceof RoutingConnectionFactory
				|| !(connectionFactory instanceof ConnectionFactory)) {
			logger.info("The container of " + listener + " uses a routing connection factory: on RabbitMQ 4.3, "
					+ "messages it gives back when it stops count as failed deliveries of a quorum queue");
			return;
		}
		container.setConnectionFactory(channels.decorate((ConnectionFactory) connectionFactory));
	}

	// How long a stopping container waits for its workers: also how long its channels
	// wait for forwards in flight before they give their messages back.
	private static Duration shutdownTimeout(AbstractMessageListenerContainer container) {
		Object timeout = new DirectFieldAccessor(container).getPropertyValue("shutdownTimeout");
		return Duration.ofMillis((timeout instanceof Long millis && millis > 0) ? millis
				: AbstractMessageListenerContainer.DEFAULT_SHUTDOWN_TIMEOUT);
	}

	// How many failed messages one consumer holds while the broker blocks publishing:
	// half its prefetch, so that the other half keeps healthy messages flowing.
	private static int holdLimit(AbstractMessageListenerContainer container) {
		Object prefetch = new DirectFieldAccessor(container).getPropertyValue("prefetchCount");
		int count = (prefetch instanceof Integer value && value > 0) ? value
				: AbstractMessageListenerContainer.DEFAULT_PREFETCH_COUNT;
		return Math.max(1, count / 2);
	}

	/**
	 * A batching strategy that splits no producer-side batch, so that such a batch
	 * reaches the wrapper whole, as the one delivery it is.
	 */
	private static final class ProducerBatchesKeptWhole extends SimpleBatchingStrategy {

		ProducerBatchesKeptWhole() {
			super(0, 0, 0L);
		}

		@Override
		public boolean canDebatch(MessageProperties properties) {
			return false;
		}

	}

}
