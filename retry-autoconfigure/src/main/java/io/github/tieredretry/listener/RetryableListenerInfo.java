package io.github.tieredretry.listener;

import java.lang.reflect.Method;
import java.util.List;

import io.github.tieredretry.policy.EffectiveRetryPolicy;
import org.jspecify.annotations.Nullable;

/**
 * A listener container running a {@code @RetryableListener}.
 *
 * @param listener the listener, e.g. {@code OrderListener#onOrder}
 * @param listenerId the container's listener id
 * @param queues the queues it consumes; their retries come back to them
 * @param policyName the named policy ({@code ""} for the defaults)
 * @param policy the effective policy
 * @param beanClass the listener bean's class
 * @param method the listener method, or {@code null} for a class-level listener
 */
public record RetryableListenerInfo(String listener, @Nullable String listenerId, List<String> queues,
		String policyName, EffectiveRetryPolicy policy, Class<?> beanClass, @Nullable Method method) {
}
