package io.github.tieredretry.internal.install;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

import com.rabbitmq.client.amqp.Consumer;
import com.rabbitmq.client.amqp.Management;
import io.github.tieredretry.annotation.Backend;
import io.github.tieredretry.annotation.Breaker;
import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.internal.delivery.AmqpRetryingListener;
import io.github.tieredretry.internal.delivery.ListenerRuntime;
import io.github.tieredretry.internal.policy.BackendChooser;
import io.github.tieredretry.internal.policy.RetryDecider;
import io.github.tieredretry.internal.settlement.ForwardSender;
import io.github.tieredretry.internal.settlement.ForwardSenders;
import io.github.tieredretry.internal.settlement.RetryNotifications;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.listener.ListenerBackend;
import io.github.tieredretry.listener.RetryableListenerConfigurationException;
import io.github.tieredretry.listener.RetryableListenerInfo;
import io.github.tieredretry.listener.RetryableListenerRegistry;
import io.github.tieredretry.policy.EffectiveRetryPolicy;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.AmqpAcknowledgment;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessagePostProcessor;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbitmq.client.AmqpConnectionFactory;
import org.springframework.amqp.rabbitmq.client.listener.RabbitAmqpListenerContainer;
import org.springframework.amqp.rabbitmq.client.listener.RabbitAmqpMessageListenerAdapter;
import org.springframework.beans.DirectFieldAccessor;
import org.springframework.util.ClassUtils;

/**
 * Applies {@code @RetryableListener} to a container of Spring AMQP's RabbitMQ AMQP 1.0
 * client ({@code spring-rabbitmq-client}): wraps its listener in an
 * {@link AmqpRetryingListener}. Used only when that client is on the classpath: the
 * installer checks the container's class by name first.
 */
public final class AmqpListenerInstallation {

	private static final Log logger = LogFactory.getLog(AmqpListenerInstallation.class);

	private AmqpListenerInstallation() {
	}

	/**
	 * Check the listener can be retried, wrap it, and register its backend and queue.
	 * @param listener the listener's name
	 * @param handlers its handler methods
	 * @param annotation its annotation
	 * @param beanClass the listener bean's class
	 * @param method the listener method, or {@code null} for a class-level listener
	 * @param amqpContainer the container, not yet initialized
	 * @param policies resolves its policy
	 * @param topology the retry topology
	 * @param senders makes its forwarding path
	 * @param runtime what the delivery path of every listener shares
	 * @param backends where its backend is registered
	 * @param registry records the listener
	 * @return the policy applied
	 */
	static EffectiveRetryPolicy install(String listener, List<Method> handlers, RetryableListener annotation,
			Class<?> beanClass, @Nullable Method method, Object amqpContainer, ListenerPolicies policies,
			RetryTopology topology, ForwardSenders senders, ListenerRuntime runtime, RetryBackends backends,
			RetryableListenerRegistry registry) {
		RabbitAmqpListenerContainer container = (RabbitAmqpListenerContainer) amqpContainer;
		DirectFieldAccessor fields = new DirectFieldAccessor(container);
		String queue = checkSupported(listener, handlers, container, fields);
		if (policies.resolveBreaker(annotation, listener).enabled()) {
			throw new RetryableListenerConfigurationException(listener,
					"circuit breakers are not supported on listeners of the RabbitMQ AMQP 1.0 client",
					breakerOff(annotation) + ", or give it an AMQP 0-9-1 container factory (Spring Boot's default).");
		}
		RabbitAmqpMessageListenerAdapter adapter = (RabbitAmqpMessageListenerAdapter) container.getMessageListener();
		AmqpConnectionFactory connectionFactory = (AmqpConnectionFactory) fields.getPropertyValue("connectionFactory");
		// The container hands both to its own adapter only: the adapter is wrapped now.
		adapter.setConnectionFactory(connectionFactory);
		List<MessagePostProcessor> postProcessors = new ArrayList<>();
		postProcessors.add((message) -> asOverAmqp091(message, queue));
		if (fields.getPropertyValue("afterReceivePostProcessors") instanceof Collection<?> configured) {
			configured.forEach((postProcessor) -> postProcessors.add((MessagePostProcessor) postProcessor));
		}
		adapter.setAfterReceivePostProcessors(postProcessors);
		EffectiveRetryPolicy policy = policies.resolve(annotation, listener);
		Backend requested = policies.resolveBackend(annotation);
		ListenerBackend backend = new ListenerBackend(listener, requested, (version) -> BackendChooser
			.chooseForDeliveryTime(requested, version, queue, queueType(connectionFactory, queue, version)));
		backends.register(backend);
		RetryableListenerInfo info = new RetryableListenerInfo(listener, container.getListenerId(), List.of(queue),
				annotation.policy().trim(), policy, beanClass, method);
		RetryNotifications notifications = senders.notificationsFor(listener, policy.maxRetries());
		// The forwarding path of every retryable listener; while the broker blocks
		// publishers it holds at most half the consumer's credits.
		int credits = (fields.getPropertyValue("initialCredits") instanceof Integer initial) ? initial : 100;
		ForwardSender sender = senders.senderFor(notifications, credits / 2);
		container.setupMessageListener(new AmqpRetryingListener(adapter, info, queue,
				new RetryDecider(topology.tiers(), policy), runtime, notifications, backend, sender));
		topology.registerWorkQueue(queue);
		registry.applied(info, container);
		return policy;
	}

	// The message as a listener of an AMQP 0-9-1 container sees it: its retry count in
	// MessageProperties#getRetryCount (over AMQP 1.0 it arrives as a header), and the
	// queue it was consumed from.
	private static Message asOverAmqp091(Message message, String queue) {
		MessageProperties properties = message.getMessageProperties();
		if (properties.getHeaders().remove(MessageProperties.RETRY_COUNT) instanceof Number count) {
			properties.setRetryCount(count.longValue());
		}
		properties.setConsumerQueue(queue);
		return message;
	}

	// The queue's type as the broker reports it, read over the listener's own AMQP 1.0
	// connection; null where it cannot be read (the choice says so).
	private static @Nullable String queueType(AmqpConnectionFactory connectionFactory, String queue, String version) {
		if (!BackendChooser.canHoldRetries(version)) {
			// The type changes nothing then; before 4.0 the client could not even ask.
			return null;
		}
		try {
			Management.QueueInfo info = connectionFactory.getConnection().management().queueInfo(queue);
			return info.type().name().toLowerCase(Locale.ROOT);
		}
		catch (RuntimeException ex) {
			// The choice then says the type could not be read; the cause is here.
			logger.warn("Could not read the type of queue '" + queue + "' over AMQP 1.0: " + ex, ex);
			return null;
		}
	}

	// How to turn the breaker off, from where it comes: the annotation wins over the
	// policy, so a policy's breaker.enabled=false would not undo Breaker.ON.
	private static String breakerOff(RetryableListener annotation) {
		if (annotation.breaker() == Breaker.ON) {
			return "Give it @RetryableListener(breaker = Breaker.OFF) instead of Breaker.ON";
		}
		String policy = annotation.policy().trim();
		String property = policy.isEmpty() ? "retry.defaults.breaker.enabled"
				: "retry.policies." + policy + ".breaker.enabled";
		return "Give it @RetryableListener(breaker = Breaker.OFF), or set " + property + "=false";
	}

	private static String checkSupported(String listener, List<Method> handlers, RabbitAmqpListenerContainer container,
			DirectFieldAccessor fields) {
		if (!(container.getMessageListener() instanceof RabbitAmqpMessageListenerAdapter)) {
			throw new RetryableListenerConfigurationException(listener,
					"its AMQP 1.0 container's listener is not a @RabbitListener method's",
					"This is unexpected for a @RabbitListener; please report it.");
		}
		Object batchSize = fields.getPropertyValue("batchSize");
		if (batchSize instanceof Integer size && size > 1) {
			throw new RetryableListenerConfigurationException(listener,
					"batch listeners of the RabbitMQ AMQP 1.0 client are not supported",
					"A batch is settled as a whole there. Consume single messages (remove batchSize) for this "
							+ "listener.");
		}
		for (Method handler : handlers) {
			if (ListenerShapes.completesLater(handler)) {
				throw new RetryableListenerConfigurationException(listener,
						"asynchronous listeners of the RabbitMQ AMQP 1.0 client are not supported",
						"Make the listener method return void or a value.");
			}
			for (Class<?> parameter : handler.getParameterTypes()) {
				if (Consumer.Context.class.isAssignableFrom(parameter)
						|| AmqpAcknowledgment.class.isAssignableFrom(parameter)) {
					throw new RetryableListenerConfigurationException(listener,
							"it takes the delivery's " + ClassUtils.getShortName(parameter) + " to settle it",
							"The starter settles every delivery of a retryable listener: remove the parameter and "
									+ "let the listener throw to fail a message.");
				}
			}
		}
		String[] queues = (String[]) fields.getPropertyValue("queues");
		if (queues == null || queues.length != 1) {
			throw new RetryableListenerConfigurationException(listener,
					"a listener of the RabbitMQ AMQP 1.0 client must consume exactly one queue",
					"Give it one queue (or one @RabbitListener per queue).");
		}
		return queues[0];
	}

}
