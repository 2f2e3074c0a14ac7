package io.github.tieredretry.autoconfigure;

import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import com.rabbitmq.client.Channel;
import io.github.tieredretry.delayedsend.DelayedSender;
import io.github.tieredretry.internal.delayedsend.DefaultDelayedSender;
import io.github.tieredretry.internal.delayedsend.ScheduledCounts;
import io.github.tieredretry.internal.delayedsend.ScheduledDeliveries;
import io.github.tieredretry.internal.delayedsend.ScheduledHops;
import io.github.tieredretry.internal.event.RetryEventPublisher;
import io.github.tieredretry.internal.forwarding.ConfirmedPublisher;
import io.github.tieredretry.internal.forwarding.MessageForwarder;
import io.github.tieredretry.internal.forwarding.RetryExecutors;
import io.github.tieredretry.internal.topology.RetryTopology;

import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.amqp.support.converter.SimpleMessageConverter;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Auto-configuration of delayed sends: the {@link DelayedSender} bean and the consumer of
 * this application's scheduled queue, to which the tiers return delayed sends.
 */
@AutoConfiguration(after = TieredRetryAutoConfiguration.class)
@ConditionalOnClass({ RabbitTemplate.class, Channel.class })
@ConditionalOnBean({ RetryTopology.class, MessageForwarder.class })
@ConditionalOnBooleanProperty(name = "retry.delayed-send.enabled", matchIfMissing = true)
public final class DelayedSendAutoConfiguration {

	/** The name of the scheduled queue's bean (a {@link Queue}). */
	public static final String SCHEDULED_QUEUE_BEAN = "retryScheduledQueue";

	/** Delayed sends a consumer of the scheduled queue holds unacknowledged at most. */
	private static final int PREFETCH = 250;

	@Bean(SCHEDULED_QUEUE_BEAN)
	Queue retryScheduledQueue(RetryProperties properties, RetryTopology topology, Environment environment) {
		String name = RetrySettings.scheduledQueue(properties, environment.getProperty("spring.application.name"));
		// The tiers return delayed sends to it through retry.return, like retries to a
		// work queue.
		topology.registerWorkQueue(name);
		// Quorum whatever the tiers' type: replicated, and declared alike by every
		// application that shares it (retry.scheduled, for those without a name). A
		// delayed send given back after a failed publish must never be dropped by a
		// delivery limit (RabbitMQ 4.0 to 4.2 count every return).
		Map<String, Object> arguments = new LinkedHashMap<>();
		arguments.put("x-queue-type", "quorum");
		arguments.put("x-delivery-limit", Integer.MAX_VALUE);
		return new Queue(name, true, false, false, arguments);
	}

	@Bean
	ScheduledCounts retryScheduledCounts(RetryTopology topology) {
		return new ScheduledCounts(topology.tiers().tiers(), Clock.systemUTC());
	}

	@Bean
	ScheduledHops retryScheduledHops(@Qualifier(SCHEDULED_QUEUE_BEAN) Queue scheduledQueue, RetryTopology topology,
			MessageForwarder forwarder, ScheduledCounts counts) {
		return new ScheduledHops(scheduledQueue.getName(), topology.tiers(), forwarder, counts, Clock.systemUTC());
	}

	@Bean
	@ConditionalOnMissingBean
	DelayedSender delayedSender(ScheduledHops hops, ObjectProvider<RabbitTemplate> templates,
			RetryProperties properties) {
		RabbitTemplate template = templates.getIfUnique();
		// The confirm's own timeout settles a publish; this bound also covers declaring
		// a missing topology and publishing again.
		long wait = RetrySettings.publish(properties).getConfirmTimeout().toMillis() * 2 + 1000;
		return new DefaultDelayedSender(hops,
				(template != null) ? template.getMessageConverter() : new SimpleMessageConverter(),
				Duration.ofMillis(wait));
	}

	@Bean
	SimpleMessageListenerContainer retryScheduledQueueContainer(ConnectionFactory connectionFactory,
			@Qualifier(SCHEDULED_QUEUE_BEAN) Queue scheduledQueue, ScheduledHops hops, ConfirmedPublisher publisher,
			MessageForwarder forwarder, RetryEventPublisher events, RetryExecutors executors,
			RetryProperties properties) {
		SimpleMessageListenerContainer container = new SimpleMessageListenerContainer(connectionFactory);
		container.setQueueNames(scheduledQueue.getName());
		container.setAcknowledgeMode(AcknowledgeMode.MANUAL);
		container.setPrefetchCount(PREFETCH);
		container.setMessagePropertiesConverter(ScheduledDeliveries.propertiesConverter());
		container.setMessageListener(new ScheduledDeliveries(hops, publisher, forwarder, events, executors,
				RetrySettings.publish(properties).getFailureInitialPause()));
		return container;
	}

}
