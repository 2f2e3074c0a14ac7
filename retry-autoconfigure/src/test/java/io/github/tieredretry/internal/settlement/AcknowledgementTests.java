package io.github.tieredretry.internal.settlement;

import java.io.IOException;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.AlreadyClosedException;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ShutdownSignalException;
import io.github.tieredretry.headers.RetryHeaders;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.connection.ChannelProxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.mockito.ArgumentMatchers.anyBoolean;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.BDDMockito.given;
import static org.mockito.BDDMockito.willThrow;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;

/**
 * Tests for {@link Acknowledgement}.
 */
class AcknowledgementTests {

	private final Channel channel = mock(Channel.class);

	@Test
	void deliveryIsSettledOnceWhateverIsAskedAfterwards() throws Exception {
		Acknowledgement acknowledgement = new Acknowledgement(this.channel, message(5));

		acknowledgement.ack();
		acknowledgement.ack();
		acknowledgement.requeue();

		verify(this.channel).basicAck(5, false);
		verify(this.channel, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
	}

	@Test
	void requeueIsANackWithRequeueNeverAReject() throws Exception {
		Acknowledgement acknowledgement = new Acknowledgement(this.channel, message(6));

		acknowledgement.requeue();
		acknowledgement.ack();

		verify(this.channel).basicNack(6, false, true);
		verify(this.channel, never()).basicReject(anyLong(), anyBoolean());
		verify(this.channel, never()).basicAck(anyLong(), anyBoolean());
	}

	@Test
	void messageTheBrokerHasNeverCountedAReturnOfMayBeRequeuedOnce() {
		Acknowledgement acknowledgement = new Acknowledgement(this.channel, message(7));

		assertThat(acknowledgement.countedReturns()).isZero();
		assertThat(acknowledgement.mayRequeue()).isTrue();
	}

	@Test
	void messageWhoseReturnsTheBrokerHasCountedIsNotRequeuedByTheStarter() {
		Message returned = message(8);
		returned.getMessageProperties().setHeader(RetryHeaders.BROKER_DELIVERY_COUNT, 2L);
		Acknowledgement acknowledgement = new Acknowledgement(this.channel, returned);

		assertThat(acknowledgement.countedReturns()).isEqualTo(2);
		assertThat(acknowledgement.mayRequeue()).isFalse();
	}

	@Test
	void aCountThatIsNotANumberCountsAsNone() {
		Message forged = message(9);
		forged.getMessageProperties().setHeader(RetryHeaders.BROKER_DELIVERY_COUNT, "many");

		assertThat(new Acknowledgement(this.channel, forged).mayRequeue()).isTrue();
	}

	@Test
	void ackGoesToTheChannelThatDeliveredNotToTheCachedChannelProxy() throws Exception {
		// Once its channel has died the proxy would open a new one, where the tag names
		// another message.
		ChannelProxy proxy = mock(ChannelProxy.class);
		given(proxy.getTargetChannel()).willReturn(this.channel);
		Acknowledgement acknowledgement = new Acknowledgement(proxy, message(7));

		acknowledgement.ack();

		assertThat(acknowledgement.channel()).isSameAs(this.channel);
		verify(this.channel).basicAck(7, false);
		verify(proxy, never()).basicAck(anyLong(), anyBoolean());
	}

	@Test
	void ackOnADeadChannelFailsQuietly() throws Exception {
		AMQP.Channel.Close close = new AMQP.Channel.Close.Builder().replyCode(AMQP.REPLY_SUCCESS)
			.replyText("OK")
			.build();
		willThrow(new AlreadyClosedException(new ShutdownSignalException(false, true, close, null))).given(this.channel)
			.basicAck(8, false);
		willThrow(new IOException("connection reset")).given(this.channel).basicNack(9, false, true);

		assertThatNoException().isThrownBy(() -> new Acknowledgement(this.channel, message(8)).ack());
		assertThatNoException().isThrownBy(() -> new Acknowledgement(this.channel, message(9)).requeue());
	}

	private static Message message(long deliveryTag) {
		MessageProperties properties = new MessageProperties();
		properties.setDeliveryTag(deliveryTag);
		return new Message(new byte[0], properties);
	}

}
