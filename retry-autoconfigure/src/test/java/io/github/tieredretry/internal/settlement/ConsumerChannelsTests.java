package io.github.tieredretry.internal.settlement;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.rabbitmq.client.Channel;
import io.github.tieredretry.internal.forwarding.RetryExecutors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mockito.InOrder;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.connection.ChannelProxy;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.context.Lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.anyBoolean;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.inOrder;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;

/**
 * What a retryable container's consumer channels do with the container's own settlements:
 * a stop gives every message back with {@code basic.nack}, which RabbitMQ 4.3 does not
 * count as a failed delivery.
 */
class ConsumerChannelsTests {

	private final RetryExecutors executors = new RetryExecutors();

	private final HeldMessages held = new HeldMessages(this.executors);

	private final Channel real = mock(Channel.class);

	/** The container's channel as the caching connection factory hands it out. */
	private final ChannelProxy cached = mock(ChannelProxy.class);

	private final ConsumerChannels channels = new ConsumerChannels(mock(Lifecycle.class), this.held,
			Duration.ofSeconds(5));

	private Channel consumerChannel;

	@BeforeEach
	void containerOpensItsChannel() throws Exception {
		ConnectionFactory connectionFactory = mock(ConnectionFactory.class);
		Connection connection = mock(Connection.class);
		given(connectionFactory.createConnection()).willReturn(connection);
		given(connection.createChannel(false)).willReturn(this.cached);
		given(this.cached.getTargetChannel()).willReturn(this.real);
		given(this.real.isOpen()).willReturn(true);
		this.consumerChannel = this.channels.decorate(connectionFactory).createConnection().createChannel(false);
	}

	@AfterEach
	void stopThreads() {
		this.executors.close(Duration.ZERO);
	}

	@Test
	void containersRejectWithRequeueIsANack() throws Exception {
		this.consumerChannel.basicReject(5, true);

		verify(this.cached).basicNack(5, false, true);
		verify(this.cached, never()).basicReject(anyLong(), anyBoolean());
	}

	@Test
	void rejectWithoutRequeueIsLeftAlone() throws Exception {
		this.consumerChannel.basicReject(6, false);

		verify(this.cached).basicReject(6, false);
		verify(this.cached, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
	}

	@Test
	void closingChannelWaitsForForwardsInFlightThenGivesBackWhatIsLeftUncounted() throws Exception {
		OutstandingDeliveries outstanding = this.channels.of(this.consumerChannel);
		outstanding.add(7);
		CompletableFuture.runAsync(() -> outstanding.remove(7),
				CompletableFuture.delayedExecutor(200, TimeUnit.MILLISECONDS));
		long started = System.nanoTime();

		this.consumerChannel.close();

		assertThat(outstanding.size()).isZero();
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(150));
		InOrder order = inOrder(this.real, this.cached);
		order.verify(this.real).basicNack(0, true, true);
		order.verify(this.cached).close();
	}

	@Test
	void closingChannelGivesUpWaitingAfterTheSettleTimeout() throws Exception {
		ConsumerChannels impatient = new ConsumerChannels(mock(Lifecycle.class), this.held, Duration.ofMillis(100));
		ConnectionFactory connectionFactory = mock(ConnectionFactory.class);
		Connection connection = mock(Connection.class);
		given(connectionFactory.createConnection()).willReturn(connection);
		given(connection.createChannel(false)).willReturn(this.cached);
		Channel channel = impatient.decorate(connectionFactory).createConnection().createChannel(false);
		impatient.of(channel).add(8);

		channel.close();

		InOrder order = inOrder(this.real, this.cached);
		order.verify(this.real).basicNack(0, true, true);
		order.verify(this.cached).close();
	}

	@Test
	void cancelledConsumerGivesBackWhatTheStarterHoldsThroughAPause() throws Exception {
		this.held.requeueLater(new Acknowledgement(this.consumerChannel, message(9)), Duration.ofHours(1).toMillis());

		this.consumerChannel.basicCancel("consumer-1");

		verify(this.cached).basicCancel("consumer-1");
		verify(this.real).basicNack(9, false, true);
	}

	@Test
	void containersMultipleNackSettlesWhatTheStarterHoldsFirst() throws Exception {
		this.held.requeueLater(new Acknowledgement(this.consumerChannel, message(3)), Duration.ofHours(1).toMillis());

		this.consumerChannel.basicNack(10, true, true);

		InOrder order = inOrder(this.real, this.cached);
		order.verify(this.real).basicNack(3, false, true);
		order.verify(this.cached).basicNack(10, true, true);
	}

	@Test
	void decoratedObjectsAreTheirOwnIdentityAsMapKeys() throws Exception {
		ConnectionFactory connectionFactory = this.channels.decorate(mock(ConnectionFactory.class));
		Map<Object, String> keys = new HashMap<>();
		keys.put(connectionFactory, "factory");
		keys.put(this.consumerChannel, "channel");

		assertThat(keys).containsEntry(connectionFactory, "factory").containsEntry(this.consumerChannel, "channel");
		assertThat(connectionFactory).isNotEqualTo(this.channels.decorate(mock(ConnectionFactory.class)));
	}

	private static Message message(long deliveryTag) {
		MessageProperties properties = new MessageProperties();
		properties.setDeliveryTag(deliveryTag);
		return new Message(new byte[0], properties);
	}

}
