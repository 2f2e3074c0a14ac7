package io.github.tieredretry.testsupport;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Command;
import com.rabbitmq.client.Method;
import com.rabbitmq.client.TrafficListener;

import org.springframework.boot.amqp.autoconfigure.ConnectionFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Records the AMQP methods an application sends, as they go on the wire: which requeues
 * are {@code basic.nack} and which {@code basic.reject} (RabbitMQ 4.3 counts a reject,
 * not a nack, towards a quorum queue's delivery limit).
 */
public final class OutboundFrames implements TrafficListener {

	private final List<Method> sent = new CopyOnWriteArrayList<>();

	@Override
	public void write(Command outboundCommand) {
		this.sent.add(outboundCommand.getMethod());
	}

	@Override
	public void read(Command inboundCommand) {
	}

	/**
	 * Requeues sent with {@code basic.nack}.
	 * @return how many
	 */
	public long requeueingNacks() {
		return this.sent.stream()
			.filter((method) -> method instanceof AMQP.Basic.Nack nack && nack.getRequeue())
			.count();
	}

	/**
	 * A mark of what was sent so far, for {@link #nacksAndRejectsSince(int)}.
	 * @return the mark
	 */
	public int mark() {
		return this.sent.size();
	}

	/**
	 * Every {@code basic.nack} and {@code basic.reject} sent after a mark, requeueing or
	 * not.
	 * @param mark a {@link #mark()}
	 * @return the methods, in the order they were sent
	 */
	public List<Method> nacksAndRejectsSince(int mark) {
		return this.sent.subList(mark, this.sent.size())
			.stream()
			.filter((method) -> method instanceof AMQP.Basic.Nack || method instanceof AMQP.Basic.Reject)
			.toList();
	}

	/**
	 * Messages sent back with {@code basic.reject}.
	 * @return how many
	 */
	public long rejects() {
		return this.sent.stream().filter(AMQP.Basic.Reject.class::isInstance).count();
	}

	/**
	 * Records the frames of every connection of an application: import it, and inject the
	 * {@link OutboundFrames}.
	 */
	@Configuration(proxyBeanMethods = false)
	public static class Recording {

		@Bean
		OutboundFrames outboundFrames() {
			return new OutboundFrames();
		}

		@Bean
		ConnectionFactoryCustomizer recordOutboundFrames(OutboundFrames frames) {
			return (factory) -> factory.setTrafficListener(frames);
		}

	}

}
