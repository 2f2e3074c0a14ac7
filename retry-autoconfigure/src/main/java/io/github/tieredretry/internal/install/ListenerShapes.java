package io.github.tieredretry.internal.install;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.listener.RetryableListenerConfigurationException;
import org.aopalliance.aop.Advice;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.core.MessageListenerContainer;
import org.springframework.amqp.rabbit.annotation.RabbitHandler;
import org.springframework.amqp.rabbit.config.AbstractRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.config.StatefulRetryOperationsInterceptor;
import org.springframework.amqp.rabbit.config.StatelessRetryOperationsInterceptor;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.DirectMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpoint;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.BridgeMethodResolver;
import org.springframework.core.KotlinDetector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.messaging.handler.annotation.SendTo;
import org.springframework.util.ReflectionUtils;

/**
 * What shape a {@code @RetryableListener} has (batch, asynchronous, a listener of the
 * AMQP 1.0 client) and whether its container can be retried safely: the checks that
 * refuse, at startup and with the fix, what the starter cannot retry without losing or
 * repeating messages.
 */
public final class ListenerShapes {

	private static final String AMQP_CLIENT_CONTAINER = "org.springframework.amqp.rabbitmq.client.listener."
			+ "RabbitAmqpListenerContainer";

	private static final String MONO = "reactor.core.publisher.Mono";

	/** Return types that produce a stream of values, not one outcome. */
	private static final Set<String> STREAMS = Set.of("reactor.core.publisher.Flux", "kotlinx.coroutines.flow.Flow",
			"org.reactivestreams.Publisher", "java.util.concurrent.Flow$Publisher");

	private ListenerShapes() {
	}

	static @Nullable Method specificMethod(@Nullable Method method, Class<?> beanClass) {
		if (method == null) {
			return null;
		}
		return BridgeMethodResolver.findBridgedMethod(AopUtils.getMostSpecificMethod(method, beanClass));
	}

	static @Nullable RetryableListener findAnnotation(Class<?> beanClass, @Nullable Method method, String listener) {
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

	static List<Method> rabbitHandlers(Class<?> beanClass) {
		return Arrays.stream(ReflectionUtils.getUniqueDeclaredMethods(beanClass, ReflectionUtils.USER_DECLARED_METHODS))
			.filter((candidate) -> AnnotatedElementUtils.hasAnnotation(candidate, RabbitHandler.class))
			.toList();
	}

	// Refuses what cannot be retried safely; returns whether the listener takes batches.
	static boolean checkSupported(String listener, Class<?> beanClass, List<Method> handlers,
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

	// By class name: the RabbitMQ AMQP 1.0 client (spring-rabbitmq-client) is optional.
	static boolean isAmqpClientContainer(MessageListenerContainer container) {
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

	// Whether Spring AMQP treats the method as asynchronous: it returns a
	// CompletableFuture or a Mono, or is a Kotlin suspend function (run as a Mono).
	static boolean isAsync(Method handler) {
		Class<?> returnType = handler.getReturnType();
		return CompletableFuture.class.isAssignableFrom(returnType) || MONO.equals(returnType.getName())
				|| KotlinDetector.isSuspendingFunction(handler);
	}

}
