package io.github.tieredretry.internal.install;

import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Method;
import java.util.List;

import io.github.tieredretry.listener.RetryableListenerConfigurationException;
import io.github.tieredretry.listener.RetryableListenerRegistry;

import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.annotation.RabbitListeners;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

/**
 * Fails startup when a {@code @RetryableListener} was found but applied to no listener
 * container, so that a typo or an unsupported setup never silently leaves a listener
 * without its retries. Runs after all listener containers have been created and before
 * they start.
 */
public final class RetryableListenerVerifier implements SmartLifecycle {

	/** Before the listener containers (which start in the last phase). */
	public static final int PHASE = Integer.MAX_VALUE - 1000;

	private final RetryableListenerRegistry registry;

	private volatile boolean running;

	public RetryableListenerVerifier(RetryableListenerRegistry registry) {
		this.registry = registry;
	}

	@Override
	public void start() {
		for (RetryableListenerRegistry.Applied applied : this.registry.containers()) {
			// Known only now: a transaction manager makes the container transacted when
			// it initializes.
			if (applied.container() instanceof AbstractMessageListenerContainer container
					&& container.isChannelTransacted()) {
				throw new RetryableListenerConfigurationException(applied.listener(),
						"transacted listener containers are not supported",
						"The starter acknowledges a failed message when its forward is confirmed, after the "
								+ "listener has returned, which a channel transaction cannot include. Remove "
								+ "channelTransacted / the transaction manager from this listener's container "
								+ "factory.");
			}
		}
		List<RetryableListenerRegistry.Declared> unapplied = this.registry.unapplied();
		if (!unapplied.isEmpty()) {
			RetryableListenerRegistry.Declared first = unapplied.get(0);
			String listener = ClassUtils.getShortName(first.beanClass())
					+ ((first.method() != null) ? "#" + first.method().getName() : "");
			boolean hasRabbitListener = (first.method() != null)
					? isRabbitListener(first.method()) || isRabbitListener(first.beanClass())
					: isRabbitListener(first.beanClass()) || hasRabbitListenerMethod(first.beanClass());
			if (!hasRabbitListener) {
				throw new RetryableListenerConfigurationException(listener, "there is no @RabbitListener",
						"Put @RetryableListener next to a @RabbitListener (on the same method, or on a class-level "
								+ "@RabbitListener class).");
			}
			throw new RetryableListenerConfigurationException(listener,
					"its listener container was not created by a container factory bean",
					"Reference the container factory by bean name (containerFactory = \"myFactory\") rather than "
							+ "through an expression returning an instance, and make sure the factory class is not "
							+ "final.");
		}
		this.running = true;
	}

	private static boolean isRabbitListener(AnnotatedElement element) {
		return AnnotatedElementUtils.hasAnnotation(element, RabbitListener.class)
				|| AnnotatedElementUtils.hasAnnotation(element, RabbitListeners.class);
	}

	private static boolean hasRabbitListenerMethod(Class<?> type) {
		for (Method method : type.getMethods()) {
			if (isRabbitListener(method)) {
				return true;
			}
		}
		for (Method method : type.getDeclaredMethods()) {
			if (isRabbitListener(method)) {
				return true;
			}
		}
		return false;
	}

	@Override
	public void stop() {
		this.running = false;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

}
