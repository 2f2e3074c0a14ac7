package io.github.tieredretry.internal.settlement;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.rabbitmq.client.Channel;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;

import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.inOrder;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;

/**
 * Tests for {@link OutstandingDeliveries}: which acks of one consumer channel go out
 * together, and which wait. The deferral runs only when a test runs it.
 */
class OutstandingDeliveriesTests {

	private final Channel channel = mock(Channel.class);

	/** Deferred tasks, run by the test. */
	private final List<Runnable> deferred = new ArrayList<>();

	private final OutstandingDeliveries outstanding = new OutstandingDeliveries(
			(task, delay) -> this.deferred.add(task), Duration.ofMillis(20));

	@Test
	void processedDeliveriesWithNothingOutstandingBeforeThemAreAckedWithOneMultipleAck() throws Exception {
		List<Acknowledgement> delivered = deliver(1, 2, 3);

		Acknowledgement.ackAll(delivered);

		verify(this.channel).basicAck(3, true);
		verify(this.channel, never()).basicAck(anyLong(), eq(false));
	}

	@Test
	void acksAboveAnOutstandingDeliveryWaitForItAndGoWithItsAckInOneMultipleAck() throws Exception {
		List<Acknowledgement> delivered = deliver(1, 2, 3, 4, 5);

		Acknowledgement.ackAll(delivered.subList(0, 2));
		Acknowledgement.ackAll(delivered.subList(3, 5));
		verify(this.channel).basicAck(2, true);
		verify(this.channel, never()).basicAck(5, true);
		delivered.get(2).ack();

		verify(this.channel).basicAck(5, true);
		verify(this.channel, never()).basicAck(anyLong(), eq(false));
	}

	@Test
	void acksAboveAnOutstandingDeliveryThatIsRequeuedGoOnceItsRequeueWasSent() throws Exception {
		List<Acknowledgement> delivered = deliver(1, 2, 3);

		Acknowledgement.ackAll(delivered.subList(1, 3));
		verify(this.channel, never()).basicAck(anyLong(), org.mockito.ArgumentMatchers.anyBoolean());
		delivered.get(0).requeue();

		org.mockito.InOrder order = inOrder(this.channel);
		order.verify(this.channel).basicNack(1, false, true);
		order.verify(this.channel).basicAck(3, true);
	}

	@Test
	void acksThatWaitedLongerThanTheDeferralGoOneByOne() throws Exception {
		List<Acknowledgement> delivered = deliver(1, 2, 3);
		Acknowledgement.ackAll(delivered.subList(1, 3));

		this.deferred.forEach(Runnable::run);

		verify(this.channel).basicAck(2, false);
		verify(this.channel).basicAck(3, false);
		delivered.get(0).ack();
		verify(this.channel).basicAck(1, false);
		verify(this.channel, never()).basicAck(anyLong(), eq(true));
	}

	@Test
	void deliveryLeftToItsClosingChannelIsNeverCoveredByAMultipleAck() throws Exception {
		// A held message left for its closing channel to give back (the application
		// stops) is still unacknowledged on the broker: a multiple ack of later
		// deliveries would settle it, and it would be lost.
		List<Acknowledgement> delivered = deliver(1, 2, 3);
		delivered.get(0).leaveToChannel();

		Acknowledgement.ackAll(delivered.subList(1, 3));
		this.deferred.forEach(Runnable::run);

		verify(this.channel, never()).basicAck(anyLong(), eq(true));
		verify(this.channel).basicAck(2, false);
		verify(this.channel).basicAck(3, false);
		verify(this.channel, never()).basicAck(1, false);
	}

	private List<Acknowledgement> deliver(long... tags) {
		List<Acknowledgement> delivered = new ArrayList<>();
		for (long tag : tags) {
			MessageProperties properties = new MessageProperties();
			properties.setDeliveryTag(tag);
			delivered.add(new Acknowledgement(this.channel, new Message(new byte[0], properties), this.outstanding));
		}
		return delivered;
	}

}
