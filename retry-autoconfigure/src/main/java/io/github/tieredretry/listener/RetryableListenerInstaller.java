package io.github.tieredretry.listener;

import java.lang.reflect.Method;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.event.RetryEventPublisher;
import io.github.tieredretry.forwarding.MessageForwarder;
import io.github.tieredretry.forwarding.RetryExecutors;
import io.github.tieredretry.headers.FailureHeaderSettings;
import io.github.tieredretry.observation.RetryObservations;
import io.github.tieredretry.policy.BreakerSettings;
import io.github.tieredretry.policy.EffectiveRetryPolicy;
import io.github.tieredretry.policy.Jitter;
import io.github.tieredretry.policy.RetryBackend;
import io.github.tieredretry.policy.RetryDecider;
import io.github.tieredretry.policy.TierLadder;
import io.github.tieredretry.topology.RetryTopology;
import org.aopalliance.aop.Advice;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.core.BatchMessageListener;
import org.springframework.amqp.core.MessageListener;
import org.springframework.amqp.core.MessageListenerContainer;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.annotation.RabbitHandler;
import org.springframework.amqp.rabbit.batch.SimpleBatchingStrategy;
import org.springframework.amqp.rabbit.config.AbstractRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.config.StatefulRetryOperationsInterceptor;
import org.springframework.amqp.rabbit.config.StatelessRetryOperationsInterceptor;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.DirectMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.MethodRabbitListenerEndpoint;
import org.springframework.amqp.rabbit.listener.MultiMethodRabbitListenerEndpoint;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpoint;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareBatchMessageListener;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.DirectFieldAccessor;
import org.springframework.core.BridgeMethodResolver;
import org.springframework.core.KotlinDetector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.messaging.handler.annotation.SendTo;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Applies {@code @RetryableListener} to a listener container as its factory creates it:
 * checks that the container can be retried safely, wraps its listener, captures
 * deliveries, and registers the container's queues so that their retries can return to
 * them.
 */
public final class RetryableListenerInstaller {

	private static final Log logger = LogFactory.getLog(RetryableListenerInstaller.class);

	private static final String AMQP_CLIENT_CONTAINER = "org.springframework.amqp.rabbitmq.client.listener."
			+ "RabbitAmqpListenerContainer";

	/** How many evenly spaced draws of a jittered delay the startup notice looks at. */
	private static final int JITTER_SAMPLES = 100;

	private static final String MONO = "reactor.core.publisher.Mono";

	/** Return types that produce a stream of values, not one outcome. */
	private static final Set<String> STREAMS = Set.of("reactor.core.publisher.Flux", "kotlinx.coroutines.flow.Flow",
			"org.reactivestreams.Publisher", "java.util.concurrent.Flow$Publisher");

	/** How long stopping waits for attempts of asynchronous listeners still running. */
	private static final Duration STOPPING_WAIT = Duration.ofSeconds(5);

	private final ListenerPolicies policies;

	private final TierLadder tiers;

	private final RetryTopology topology;

	private final ListenerRuntime runtime;

	private final RetryableListenerRegistry registry;

	private final ListenerGates gates;

	private final RetryBackends backends;

	private final DeclaredQueues declaredQueues;

	private final Duration asyncAttemptTimeout;

	/**
	 * Create the installer.
	 * @param policies resolves listener policies
	 * @param topology the retry topology (work queues are registered on it)
	 * @param forwarder forwards to tiers and the parking lot
	 * @param executors the starter's threads
	 * @param failureInitialPause the pause after a first failed forward
	 * @param failureMaxPause the longest pause after consecutive failed forwards
	 * @param headerSettings how failures are described in headers
	 * @param events where retry events are published
	 * @param registry records the listeners retries were applied to
	 * @param gates creates each listener's circuit breaker, if it has one
	 * @param classifiers the application's failure classifiers, in order
	 * @param observations observes forwards
	 * @param backends chooses each listener's backend once the broker's version is known
	 * @param declaredQueues the application's queue beans
	 * @param asyncAttemptTimeout how long an attempt of an asynchronous listener may take
	 * @param clock the clock
	 */
	public RetryableListenerInstaller(ListenerPolicies policies, RetryTopology topology, MessageForwarder forwarder,
			RetryExecutors executors, Duration failureInitialPause, Duration failureMaxPause,
			FailureHeaderSettings headerSettings, RetryEventPublisher events, RetryableListenerRegistry registry,
			ListenerGates gates, List<RetryFailureClassifier> classifiers, RetryObservations observations,
			RetryBackends backends, DeclaredQueues declaredQueues, Duration asyncAttemptTimeout, Clock clock) {
		this.policies = policies;
		this.tiers = topology.tiers();
		this.topology = topology;
		this.asyncAttemptTimeout = asyncAttemptTimeout;
		this.runtime = new ListenerRuntime(new DeliveryCapture(), clock, forwarder, executors, failureInitialPause,
				failureMaxPause, headerSettings, topology.parkingLot(), events, new HeldMessages(executors),
				List.copyOf(classifiers), observations,
				new AsyncAttempts(executors, asyncAttemptTimeout, observations));
		this.registry = registry;
		this.gates = gates;
		this.backends = backends;
		this.declaredQueues = declaredQueues;
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
				: specificMethod(methodEndpoint.getMethod(), beanClass);
		String listener = ClassUtils.getShortName(beanClass) + ((method != null) ? "#" + method.getName() : "");
		RetryableListener annotation = findAnnotation(beanClass, method, listener);
		if (annotation == null) {
			return;
		}
		List<Method> handlers = (method != null) ? List.of(method) : rabbitHandlers(beanClass);
		if (isAmqpClientContainer(container)) {
			EffectiveRetryPolicy policy = AmqpListenerInstallation.install(listener, handlers, annotation, beanClass,
					method, container, this.policies, this.topology, this.runtime, this.backends, this.registry);
			logger.info("Tiered retries for " + listener + " (RabbitMQ AMQP 1.0 client): " + policy + ", tiers "
					+ this.tiers);
			return;
		}
		boolean batch = checkSupported(listener, beanClass, handlers, endpoint, container, factory);
		boolean async = handlers.stream().anyMatch(RetryableListenerInstaller::isAsync);
		AbstractMessageListenerContainer listenerContainer = (AbstractMessageListenerContainer) container;
		EffectiveRetryPolicy policy = this.policies.resolve(annotation, listener);
		MessageListener original = listenerContainer.getMessageListener();
		if (original == null) {
			throw new RetryableListenerConfigurationException(listener, "its container has no message listener",
					"This is unexpected for a @RabbitListener; please report it.");
		}
		RetryNotifications notifications = new RetryNotifications(listener, policy.maxRetries(), this.runtime.events());
		ForwardSender sender = new ForwardSender(this.runtime.forwarder(), this.runtime.executors(), notifications,
				this.runtime::newPause, this.runtime.failureInitialPause(), holdLimit(listenerContainer),
				this.runtime.heldMessages(), this.runtime.observations());
		List<String> queues = Arrays.asList(listenerContainer.getQueueNames());
		BreakerSettings breaker = this.policies.resolveBreaker(annotation, listener);
		ListenerGate gate = this.gates.gateFor(listener, queues, breaker);
		RetryableListenerInfo info = new RetryableListenerInfo(listener, listenerContainer.getListenerId(), queues,
				annotation.policy().trim(), policy, beanClass, method);
		RetryBackend requested = this.policies.resolveBackend(annotation);
		ListenerBackend backend = new ListenerBackend(listener, requested, policy,
				queues.stream().map((queue) -> this.declaredQueues.facts(queue, listener, policy, requested)).toList());
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
		listenerContainer.setMessageListener(batch ? new RetryingBatchMessageListener(original, outcomes, invocations)
				: new RetryingMessageListener(original, outcomes, invocations));
		// A producer-side batch must reach the wrapper as the one delivery it is (and is
		// then parked): the container splits none, not even for consumer-side batching,
		// which turns its splitting on when it starts.
		listenerContainer.setDeBatchingEnabled(false);
		listenerContainer.setBatchingStrategy(new ProducerBatchesKeptWhole());
		listenerContainer.setMessagePropertiesConverter(this.runtime.capture().converter());
		listenerContainer.addAfterReceivePostProcessors(this.runtime.capture().bodyCapture());
		queues.forEach(this.topology::registerWorkQueue);
		this.registry.applied(info, listenerContainer);
		warnAboutInexactDelays(listener, policy);
		if (logger.isInfoEnabled()) {
			String shape = (batch ? "batch " : "") + (async ? "asynchronous " : "");
			logger.info("Tiered retries for " + shape + listener + " on " + queues + ": " + policy + ", tiers "
					+ this.tiers + ", " + breaker.describe());
		}
	}

	/**
	 * How many failed messages one consumer holds while the broker blocks publishing:
	 * half its prefetch, so that the other half keeps healthy messages flowing.
	 */
	/**
	 * The application stops: messages waiting for a pause to end go back to their queue
	 * now, and forwards held while the broker blocks publishing give up, so that their
	 * originals go back too, with {@code basic.nack}, before the listener containers
	 * close their channels.
	 */
	public void stopping() {
		// Asynchronous attempts still running get a moment to end; those that do not go
		// back to their queue with the held messages.
		this.runtime.async()
			.stopping(
					(this.asyncAttemptTimeout.compareTo(STOPPING_WAIT) < 0) ? this.asyncAttemptTimeout : STOPPING_WAIT);
		this.gates.stopping();
		this.runtime.heldMessages().requeueAllNow();
		this.runtime.forwarder().releaseHeld();
	}

	private static int holdLimit(AbstractMessageListenerContainer container) {
		Object prefetch = new DirectFieldAccessor(container).getPropertyValue("prefetchCount");
		int count = (prefetch instanceof Integer value && value > 0) ? value
				: AbstractMessageListenerContainer.DEFAULT_PREFETCH_COUNT;
		return Math.max(1, count / 2);
	}

	private static @Nullable Method specificMethod(@Nullable Method method, Class<?> beanClass) {
		if (method == null) {
			return null;
		}
		return BridgeMethodResolver.findBridgedMethod(AopUtils.getMostSpecificMethod(method, beanClass));
	}

	private static @Nullable RetryableListener findAnnotation(Class<?> beanClass, @Nullable Method method,
			String listener) {
		if (method != null) {
			RetryableListener onMethod = AnnotatedElementUtils.findMergedAnnotation(method, RetryableListener.class);
			return (onMethod != null) ? onMethod
					: AnnotatedElementUtils.findMergedAnnotation(beanClass, RetryableListener.class);
		}
		for (Method handler : rabbitHandlers(beanClass)) {
			if (AnnotatedElementUtils.hasAnnotation(handler, RetryableListener.class)) {
				throw new RetryableListenerConfigurationException(listener + "#" + handler.getName(),
						"it is on a @RabbitHandler method of a class-level @RabbitListener",
						"All handlers of a class-level listener share one container: put @RetryableListener on the "
								+ "class instead.");
			}
		}
		return AnnotatedElementUtils.findMergedAnnotation(beanClass, RetryableListener.class);
	}

	private static List<Method> rabbitHandlers(Class<?> beanClass) {
		return Arrays.stream(ReflectionUtils.getUniqueDeclaredMethods(beanClass, ReflectionUtils.USER_DECLARED_METHODS))
			.filter((candidate) -> AnnotatedElementUtils.hasAnnotation(candidate, RabbitHandler.class))
			.toList();
	}

	// Refuses what cannot be retried safely; returns whether the listener takes batches.
	private static boolean checkSupported(String listener, Class<?> beanClass, List<Method> handlers,
			RabbitListenerEndpoint endpoint, MessageListenerContainer container, Object factory) {
		if (!(container instanceof AbstractMessageListenerContainer listenerContainer)) {
			throw new RetryableListenerConfigurationException(listener,
					"its container " + container.getClass().getName() + " is not supported",
					"Use a SimpleRabbitListenerContainerFactory or DirectRabbitListenerContainerFactory "
							+ "(Spring Boot's default factories are both supported).");
		}
		boolean batch = Boolean.TRUE.equals(endpoint.getBatchListener())
				|| (listenerContainer instanceof SimpleMessageListenerContainer simple
						&& simple.isConsumerBatchEnabled());
		for (Method handler : handlers) {
			checkReturnType(listener, beanClass, handler, batch);
		}
		if (!listenerContainer.isExposeListenerChannel()) {
			throw new RetryableListenerConfigurationException(listener, "exposeListenerChannel=false is not supported",
					"The starter acknowledges deliveries on the channel that received them. Leave "
							+ "exposeListenerChannel at its default (true).");
		}
		checkAckMode(listener, endpoint, listenerContainer);
		if (factory instanceof AbstractRabbitListenerContainerFactory<?> containerFactory
				&& containerFactory.getAdviceChain() != null) {
			for (Advice advice : containerFactory.getAdviceChain()) {
				if (advice instanceof StatelessRetryOperationsInterceptor
						|| advice instanceof StatefulRetryOperationsInterceptor) {
					throw new RetryableListenerConfigurationException(listener,
							"its container factory also applies Spring AMQP's blocking retry interceptor",
							"Blocking retries sleep in the consumer thread and, when a forward fails, would reject "
									+ "the message without requeue. Disable it for this factory "
									+ "(spring.rabbitmq.listener.simple.retry.enabled=false) and use "
									+ "retry.defaults.immediate-retries for quick in-place retries.");
				}
			}
		}
		return batch;
	}

	private static void checkReturnType(String listener, Class<?> beanClass, Method handler, boolean batch) {
		Class<?> returnType = handler.getReturnType();
		String returned = returnType.getSimpleName();
		if (!isAsync(handler)
				&& (Future.class.isAssignableFrom(returnType) || CompletionStage.class.isAssignableFrom(returnType))) {
			throw new RetryableListenerConfigurationException(listener,
					"it returns " + returned + ", which Spring AMQP sends as a reply rather than waiting for it",
					"Return CompletableFuture (or a Reactor Mono) for an asynchronous listener, or void.");
		}
		if (STREAMS.contains(returnType.getName())) {
			throw new RetryableListenerConfigurationException(listener,
					"it returns a stream of values (" + returned + "), which has no single outcome to retry",
					"Return a Mono or a CompletableFuture that completes when the message is processed, or void.");
		}
		if (isAsync(handler) && (AnnotatedElementUtils.hasAnnotation(handler, SendTo.class)
				|| AnnotatedElementUtils.hasAnnotation(beanClass, SendTo.class))) {
			throw new RetryableListenerConfigurationException(listener,
					"it is asynchronous and has @SendTo: the starter follows its result itself, so the result "
							+ "would not be sent as a reply",
					"Remove @SendTo and send the reply from the listener, or return the reply synchronously.");
		}
		if (batch && !isAsync(handler) && returnType != void.class && returnType != Void.class) {
			throw new RetryableListenerConfigurationException(listener,
					"it is a batch listener that returns " + returned + ": Spring AMQP fails a batch listener that "
							+ "returns a value after it has returned (batch listeners send no replies), so every "
							+ "message would be retried",
					"Make the method return void, or a CompletableFuture or Mono for an asynchronous batch listener.");
		}
	}

	private static void checkAckMode(String listener, RabbitListenerEndpoint endpoint,
			AbstractMessageListenerContainer container) {
		AcknowledgeMode ackMode = container.getAcknowledgeMode();
		if (ackMode != AcknowledgeMode.MANUAL && ackMode != AcknowledgeMode.NONE) {
			return;
		}
		// Say where the setting comes from: the fix is in the annotation or in the
		// container factory.
		String mode = ackMode.name();
		boolean onAnnotation = endpoint.getAckMode() != null;
		String property = "spring.rabbitmq.listener."
				+ ((container instanceof DirectMessageListenerContainer) ? "direct" : "simple") + ".acknowledge-mode";
		String source = onAnnotation ? "@RabbitListener(ackMode = \"" + mode + "\")" : "its container factory ("
				+ property + "=" + mode.toLowerCase(Locale.ROOT) + ", or setAcknowledgeMode on a factory bean)";
		String why = (ackMode == AcknowledgeMode.MANUAL)
				? "The starter acks a failed message only after its forward to a tier is confirmed, which needs "
						+ "acknowledge mode AUTO (the default)."
				: "With NONE the broker forgets a message on delivery, so a failure could lose it.";
		String remedy = onAnnotation ? "Remove ackMode = \"" + mode + "\" from the @RabbitListener"
				: "Remove " + property + " (or the factory's setAcknowledgeMode(" + mode + ")), or give this listener "
						+ "a container factory with AUTO: @RabbitListener(containerFactory = \"...\")";
		throw new RetryableListenerConfigurationException(listener,
				"acknowledge mode " + mode + ", set by " + source + ", is not supported",
				why + " " + remedy + ((ackMode == AcknowledgeMode.MANUAL) ? ", and let the listener throw." : "."));
	}

	// Whether Spring AMQP treats the method as asynchronous: it returns a
	// CompletableFuture or a Mono, or is a Kotlin suspend function (run as a Mono).
	// By class name: the RabbitMQ AMQP 1.0 client (spring-rabbitmq-client) is optional.
	private static boolean isAmqpClientContainer(MessageListenerContainer container) {
		for (Class<?> type = container.getClass(); type != null; type = type.getSuperclass()) {
			if (AMQP_CLIENT_CONTAINER.equals(type.getName())) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Whether a handler's result completes later: a future, a Mono or a stream, or a
	 * Kotlin suspend function.
	 * @param handler the handler
	 * @return whether its outcome is not known when it returns
	 */
	static boolean completesLater(Method handler) {
		Class<?> returnType = handler.getReturnType();
		return isAsync(handler) || CompletionStage.class.isAssignableFrom(returnType)
				|| Future.class.isAssignableFrom(returnType) || STREAMS.contains(returnType.getName());
	}

	private static boolean isAsync(Method handler) {
		Class<?> returnType = handler.getReturnType();
		return CompletableFuture.class.isAssignableFrom(returnType) || MONO.equals(returnType.getName())
				|| KotlinDetector.isSuspendingFunction(handler);
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

	private void warnAboutInexactDelays(String listener, EffectiveRetryPolicy policy) {
		if (!logger.isInfoEnabled() || policy.maxRetries() == 0) {
			return;
		}
		for (long retry = 1; retry <= Math.min(policy.maxRetries(), 20); retry++) {
			Duration delay = policy.delayBeforeRetry(retry);
			String notice = (policy.jitter() != 0) ? jitterNotice(listener, retry, delay, policy.jitter())
					: hopNotice(listener, retry, delay);
			if (notice != null) {
				logger.info(notice);
				return;
			}
		}
	}

	private @Nullable String hopNotice(String listener, long retry, Duration delay) {
		if (delay.compareTo(this.tiers.largest()) > 0 || this.tiers.hasExactTier(delay)) {
			return null;
		}
		List<Duration> hops = this.tiers.hopsFor(delay);
		Duration waited = hops.stream().reduce(Duration.ZERO, Duration::plus);
		String late = (waited.minus(delay).compareTo(this.tiers.smallest()) > 0)
				? ", late by " + TierLadder.nameOf(waited.minus(delay)) + " (the tiers are too far apart to compose it)"
				: "";
		return listener + ": retry " + retry + " after " + TierLadder.nameOf(delay) + " goes through tiers "
				+ hops.stream().map(TierLadder::nameOf).toList() + late + "; add " + TierLadder.nameOf(delay)
				+ " to retry.tiers for a single hop.";
	}

	// What to say about a jittered delay: nothing while the tiers serve its draws, which
	// are composed of tiers anyway (no tier added makes them single hops); that the
	// spread is lost when it is narrower than the smallest tier, as close as the tiers
	// serve a delay; and that draws are late where the tiers are too far apart to
	// compose them.
	private @Nullable String jitterNotice(String listener, long retry, Duration delay, double jitter) {
		if (delay.isZero()) {
			return null;
		}
		Duration shortest = Jitter.shortest(delay, jitter);
		Duration longest = Jitter.longest(delay, jitter);
		Duration spread = longest.minus(shortest);
		// The waits of evenly spaced draws, from the shortest to the longest.
		Set<Duration> waits = new TreeSet<>();
		Duration latest = Duration.ZERO;
		for (int sample = 0; sample <= JITTER_SAMPLES; sample++) {
			Duration draw = shortest.plusMillis(spread.toMillis() * sample / JITTER_SAMPLES);
			Duration served = this.tiers.servedWait(draw);
			waits.add(served);
			latest = (served.minus(draw).compareTo(latest) > 0) ? served.minus(draw) : latest;
		}
		String drawn = " after " + TierLadder.nameOf(delay) + " (jitter " + jitter + ": drawn between "
				+ TierLadder.nameOf(shortest) + " and " + TierLadder.nameOf(longest) + ")";
		if (spread.compareTo(this.tiers.smallest()) < 0) {
			String returns = (waits.size() == 1)
					? "every draw waits " + TierLadder.nameOf(waits.iterator().next()) + ", so messages that fail "
							+ "together are retried together and the jitter has no effect"
					: "draws wait " + String.join(" or ", waits.stream().map(TierLadder::nameOf).toList())
							+ " only, so messages that fail together are retried in " + waits.size() + " waves";
			return listener + ": the tiers cannot spread retry " + retry + drawn + ": " + returns
					+ ". The tiers serve a delay to within the smallest tier ("
					+ TierLadder.nameOf(this.tiers.smallest()) + "); add a tier shorter than the spread of "
					+ TierLadder.nameOf(spread) + " to retry.tiers, or use a longer delay or more jitter.";
		}
		if (latest.compareTo(this.tiers.smallest()) > 0) {
			return listener + ": retry " + retry + drawn + " is late by up to " + TierLadder.nameOf(latest)
					+ " for some draws (the tiers are too far apart to compose them); add tiers between "
					+ TierLadder.nameOf(shortest) + " and " + TierLadder.nameOf(longest) + " to retry.tiers.";
		}
		return null;
	}

}
