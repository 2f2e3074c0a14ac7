package io.github.tieredretry.listener;

import java.time.Duration;

import com.rabbitmq.client.Channel;
import io.github.tieredretry.forwarding.RetryExecutors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.anyBoolean;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.timeout;
import static org.mockito.Mockito.verify;

/**
 * Tests for {@link PendingRequeues}.
 */
class PendingRequeuesTests {

	private final RetryExecutors executors = new RetryExecutors();

	private final Channel channel = mock(Channel.class);

	private final PendingRequeues requeues = new PendingRequeues(this.executors);

	@AfterEach
	void closeExecutors() {
		this.executors.close(Duration.ofSeconds(1));
	}

	@Test
	void messageGoesBackToItsQueueAfterThePause() throws Exception {
		long started = System.nanoTime();

		this.requeues.requeueLater(acknowledgement(1), 300);

		verify(this.channel, timeout(5000)).basicNack(1, false, true);
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(250));
	}

	@Test
	void messageWithoutPauseGoesBackAtOnce() throws Exception {
		this.requeues.requeueLater(acknowledgement(2), 0);

		verify(this.channel).basicNack(2, false, true);
	}

	@Test
	void stoppingPutsBackEveryWaitingMessageNowAndLaterOnesAtOnce() throws Exception {
		this.requeues.requeueLater(acknowledgement(3), Duration.ofHours(1).toMillis());
		verify(this.channel, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());

		this.requeues.requeueAllNow();
		verify(this.channel).basicNack(3, false, true);

		this.requeues.requeueLater(acknowledgement(4), Duration.ofHours(1).toMillis());
		verify(this.channel).basicNack(4, false, true);
	}

	@Test
	void messageWhosePauseCannotBeScheduledGoesBackAtOnce() throws Exception {
		this.executors.close(Duration.ZERO);

		this.requeues.requeueLater(acknowledgement(5), Duration.ofHours(1).toMillis());

		verify(this.channel).basicNack(5, false, true);
	}

	private Acknowledgement acknowledgement(long deliveryTag) {
		MessageProperties properties = new MessageProperties();
		properties.setDeliveryTag(deliveryTag);
		return new Acknowledgement(this.channel, new Message(new byte[0], properties));
	}

}
