package io.github.tieredretry.benchmarks.app;

import java.util.Map;

import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.topology.RetryTopology;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.connection.AbstractConnectionFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory.ConfirmType;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.retry.RepublishMessageRecovererWithConfirms;
import org.springframework.beans.factory.DisposableBean;

/**
 * Spring AMQP's {@link RepublishMessageRecovererWithConfirms}, configured like the
 * starter's forwarding (a connection of its own, correlated confirms, mandatory with
 * returns), republishing into the same tier queue through the same exchange, so that the
 * broker does the same work for both. It counts each republish once it is confirmed.
 */
final class CountingRepublishRecoverer extends RepublishMessageRecovererWithConfirms implements DisposableBean {

	private final CachingConnectionFactory connectionFactory;

	private final Map<String, Object> tierHeader;

	private final Workloads workloads;

	private CountingRepublishRecoverer(CachingConnectionFactory connectionFactory, RabbitTemplate template,
			String routingKey, String tier, Workloads workloads) {
		super(template, RetryTopology.DELAY_EXCHANGE, routingKey, ConfirmType.CORRELATED);
		this.connectionFactory = connectionFactory;
		this.tierHeader = Map.of(RetryHeaders.TIER, tier);
		this.workloads = workloads;
	}

	static CountingRepublishRecoverer create(AbstractConnectionFactory applicationFactory, String routingKey,
			String tier, Workloads workloads) {
		CachingConnectionFactory connectionFactory = new CachingConnectionFactory(
				applicationFactory.getRabbitConnectionFactory());
		connectionFactory.setPublisherConfirmType(ConfirmType.CORRELATED);
		connectionFactory.setPublisherReturns(true);
		connectionFactory.setConnectionNameStrategy((factory) -> "benchmarks-republish-recoverer");
		RabbitTemplate template = new RabbitTemplate(connectionFactory);
		template.setMandatory(true);
		return new CountingRepublishRecoverer(connectionFactory, template, routingKey, tier, workloads);
	}

	@Override
	public void recover(Message message, @Nullable Throwable cause) {
		super.recover(message, cause);
		this.workloads.forQueue(message.getMessageProperties().getConsumerQueue())
			.forwarded(message.getMessageProperties().getMessageId());
	}

	@Override
	protected @Nullable Map<? extends String, ?> additionalHeaders(Message message, @Nullable Throwable cause) {
		return this.tierHeader;
	}

	@Override
	public void destroy() {
		this.connectionFactory.destroy();
	}

}
