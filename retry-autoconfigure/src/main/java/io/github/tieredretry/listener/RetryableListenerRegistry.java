package io.github.tieredretry.listener;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.MessageListenerContainer;

/**
 * Every {@code @RetryableListener} found on a bean, and every listener container it was
 * applied to. An annotation that was found but never applied (no {@code @RabbitListener},
 * or a container that was not created through a container factory bean) fails startup
 * instead of being silently ignored.
 */
public final class RetryableListenerRegistry {

	private final List<RetryableListenerInfo> listeners = new CopyOnWriteArrayList<>();

	private final List<Declared> declared = new CopyOnWriteArrayList<>();

	private final List<Applied> containers = new CopyOnWriteArrayList<>();

	/**
	 * A container tiered retries were applied to.
	 *
	 * @param listener the listener's name
	 * @param container the container
	 */
	public record Applied(String listener, MessageListenerContainer container) {
	}

	/**
	 * An annotation found on a bean.
	 *
	 * @param beanName the bean's name
	 * @param beanClass the bean's class
	 * @param method the annotated method, or {@code null} when the class is annotated
	 */
	public record Declared(String beanName, Class<?> beanClass, @Nullable Method method) {
	}

	public void declared(String beanName, Class<?> beanClass, @Nullable Method method) {
		this.declared.add(new Declared(beanName, beanClass, method));
	}

	public void applied(RetryableListenerInfo info, MessageListenerContainer container) {
		this.listeners.add(info);
		this.containers.add(new Applied(info.listener(), container));
	}

	public List<Applied> containers() {
		return List.copyOf(this.containers);
	}

	/**
	 * The retryable listeners applied so far.
	 * @return the listeners
	 */
	public List<RetryableListenerInfo> listeners() {
		return List.copyOf(this.listeners);
	}

	/**
	 * Annotations that were found but not applied to any listener container.
	 * @return the unapplied declarations
	 */
	public List<Declared> unapplied() {
		List<Declared> unapplied = new ArrayList<>();
		for (Declared candidate : this.declared) {
			boolean applied = this.listeners.stream()
				.anyMatch((info) -> info.beanClass().equals(candidate.beanClass())
						&& (candidate.method() == null || candidate.method().equals(info.method())));
			if (!applied) {
				unapplied.add(candidate);
			}
		}
		return unapplied;
	}

}
