package io.github.tieredretry.reliability.conditions;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Command;
import com.rabbitmq.client.Method;
import com.rabbitmq.client.TrafficListener;

/**
 * The AMQP methods a harness application sends on its connections, as they go on the
 * wire: which messages went back to their queue with {@code basic.nack(requeue=true)} and
 * whether any with {@code basic.reject} (RabbitMQ 4.3 counts a reject, not a nack,
 * towards a quorum queue's delivery limit).
 */
final class SentMethods implements TrafficListener {

	private final List<Method> sent = new CopyOnWriteArrayList<>();

	@Override
	public void write(Command outboundCommand) {
		this.sent.add(outboundCommand.getMethod());
	}

	@Override
	public void read(Command inboundCommand) {
	}

	long requeueingNacks() {
		return this.sent.stream()
			.filter((method) -> method instanceof AMQP.Basic.Nack nack && nack.getRequeue())
			.count();
	}

	long rejects() {
		return this.sent.stream().filter(AMQP.Basic.Reject.class::isInstance).count();
	}

}
