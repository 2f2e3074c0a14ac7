package io.github.tieredretry.benchmarks.app;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.internal.policy.TierLadder;

import org.springframework.amqp.core.Declarable;
import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListenerConfigurer;
import org.springframework.amqp.rabbit.listener.MethodRabbitListenerEndpoint;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.messaging.handler.annotation.support.DefaultMessageHandlerMethodFactory;
import org.springframework.util.ReflectionUtils;

/**
 * An application with many listeners, to count the broker objects their retries need:
 * {@code benchmarks.topology.kind=tiered} uses {@code @RetryableListener} (shared tiers),
 * and {@code per-queue} declares one set of delay queues and a dead-letter queue per
 * listener, as per-queue retry designs do. The listeners are registered programmatically,
 * one per queue in {@code benchmarks.topology.queues}, and never started.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
public class TopologyApplication {

	/**
	 * Suffix of a per-queue design's delay queue, before the tier's name:
	 * {@code orders.retry.10s}.
	 */
	public static final String PER_QUEUE_TIER_INFIX = ".retry.";

	/** Suffix of a per-queue design's dead-letter queue. */
	public static final String PER_QUEUE_PARKING_SUFFIX = ".parking-lot";

	@Bean
	RabbitListenerConfigurer topologyListeners(@Value("${benchmarks.topology.queues}") List<String> queues,
			@Value("${benchmarks.topology.kind}") String kind, BeanFactory beanFactory) {
		Object listener = "tiered".equals(kind) ? new RetryableTopologyListener() : new PlainTopologyListener();
		Method method = ReflectionUtils.findMethod(listener.getClass(), "onMessage", Message.class);
		return (registrar) -> {
			DefaultMessageHandlerMethodFactory handlerMethodFactory = new DefaultMessageHandlerMethodFactory();
			handlerMethodFactory.setBeanFactory(beanFactory);
			handlerMethodFactory.afterPropertiesSet();
			for (String queue : queues) {
				MethodRabbitListenerEndpoint endpoint = new MethodRabbitListenerEndpoint();
				endpoint.setId("topology-" + queue);
				endpoint.setQueueNames(queue);
				endpoint.setBean(listener);
				endpoint.setMethod(method);
				endpoint.setMessageHandlerMethodFactory(handlerMethodFactory);
				endpoint.setAutoStartup(false);
				registrar.registerEndpoint(endpoint);
			}
		};
	}

	@Bean
	@ConditionalOnProperty(name = "benchmarks.topology.kind", havingValue = "per-queue")
	Declarables perQueueRetryTopology(@Value("${benchmarks.topology.queues}") List<String> queues,
			@Value("${benchmarks.topology.tiers}") List<Duration> tiers) {
		return new Declarables(perQueueDeclarables(queues, tiers));
	}

	/**
	 * The work queues as quorum queues the application declares, where asked to: the
	 * starter sees their arguments, and adds the delayed-retry ones for listeners that
	 * may run on the broker backend ({@code retry.broker.declare-queue-arguments}).
	 * @param queues the work queues
	 * @return their declarations
	 */
	@Bean
	@ConditionalOnProperty(name = "benchmarks.topology.work-queues", havingValue = "quorum")
	Declarables quorumWorkQueues(@Value("${benchmarks.topology.queues}") List<String> queues) {
		return new Declarables(queues.stream().map((queue) -> QueueBuilder.durable(queue).quorum().build()).toList());
	}

	/**
	 * One set per work queue: a delay queue per tier that dead-letters straight back to
	 * the work queue (default exchange, the work queue's name as dead-letter routing
	 * key), and a dead-letter queue. This is the smallest per-queue design: it needs no
	 * exchange and no binding of its own.
	 * @param queues the work queues
	 * @param tiers the tiers
	 * @return the declarables
	 */
	public static List<Declarable> perQueueDeclarables(List<String> queues, List<Duration> tiers) {
		List<Declarable> declarables = new ArrayList<>();
		for (String queue : queues) {
			for (Duration tier : tiers) {
				Map<String, Object> arguments = new LinkedHashMap<>();
				arguments.put("x-message-ttl", (int) tier.toMillis());
				arguments.put("x-dead-letter-exchange", "");
				arguments.put("x-dead-letter-routing-key", queue);
				declarables.add(new Queue(queue + PER_QUEUE_TIER_INFIX + TierLadder.nameOf(tier), true, false, false,
						arguments));
			}
			declarables.add(new Queue(queue + PER_QUEUE_PARKING_SUFFIX, true, false, false));
		}
		return declarables;
	}

	/** A listener with tiered retries. */
	@RetryableListener
	static final class RetryableTopologyListener {

		void onMessage(Message message) {
			// Never started: the benchmark counts broker objects only.
		}

	}

	/** The same listener without; its retries are the per-queue design's. */
	static final class PlainTopologyListener {

		void onMessage(Message message) {
			// Never started.
		}

	}

}
