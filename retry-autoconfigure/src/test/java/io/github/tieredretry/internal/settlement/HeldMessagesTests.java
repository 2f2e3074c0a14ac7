package io.github.tieredretry.internal.settlement;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import com.rabbitmq.client.Channel;
import io.github.tieredretry.internal.forwarding.RetryExecutors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.mockito.ArgumentMatchers.anyBoolean;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.timeout;
import static org.mockito.Mockito.verify;

/**
 * Tests for {@link HeldMessages}.
 */
class HeldMessagesTests {

	private final RetryExecutors executors = new RetryExecutors();

	private final Channel channel = mock(Channel.class);

	private final HeldMessages held = new HeldMessages(this.executors);

	@AfterEach
	void closeExecutors() {
		this.executors.close(Duration.ofSeconds(1));
	}

	@Test
	void messageGoesBackToItsQueueAfterThePause() throws Exception {
		long started = System.nanoTime();

		this.held.requeueLater(acknowledgement(1), 300);

		verify(this.channel, timeout(5000)).basicNack(1, false, true);
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(250));
	}

	@Test
	void messageWithoutPauseGoesBackAtOnce() throws Exception {
		this.held.requeueLater(acknowledgement(2), 0);

		verify(this.channel).basicNack(2, false, true);
	}

	@Test
	void applicationThatStopsLeavesEveryWaitingMessageToItsChannelNowAndLaterOnesAtOnce() throws Exception {
		// Given back while the consumer still consumes, it could come back to it and be
		// returned twice: the consumer channel gives it back when its container stops.
		this.held.requeueLater(acknowledgement(3), Duration.ofHours(1).toMillis());

		this.held.stopHolding();
		this.held.requeueLater(acknowledgement(4), Duration.ofHours(1).toMillis());

		assertThat(this.held.size()).isZero();
		verify(this.channel, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
	}

	@Test
	void containerThatStopsConsumingOnAChannelGetsItsWaitingMessagesBackNowAndLaterOnesAtOnce() throws Exception {
		Channel other = mock(Channel.class);
		this.held.requeueLater(acknowledgement(3), Duration.ofHours(1).toMillis());
		this.held.requeueLater(new Acknowledgement(other, message(9)), Duration.ofHours(1).toMillis());

		this.held.giveBack(this.channel);
		verify(this.channel).basicNack(3, false, true);
		verify(other, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());

		this.held.requeueLater(acknowledgement(4), Duration.ofHours(1).toMillis());
		verify(this.channel).basicNack(4, false, true);
	}

	@Test
	void messageWhoseForwardFailedIsForwardedAgainAfterThePauseNotGivenBack() throws Exception {
		given(this.channel.isOpen()).willReturn(true);
		CompletableFuture<Long> forwardedAgain = new CompletableFuture<>();
		long started = System.nanoTime();

		this.held.forwardLater(acknowledgement(6), 300, () -> forwardedAgain.complete(System.nanoTime()));

		assertThat(forwardedAgain.get(5, TimeUnit.SECONDS) - started)
			.isGreaterThanOrEqualTo(Duration.ofMillis(250).toNanos());
		verify(this.channel, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
	}

	@Test
	void messageWhoseChannelClosedDuringThePauseIsNotForwardedAgain() throws Exception {
		given(this.channel.isOpen()).willReturn(false);
		AtomicBoolean forwardedAgain = new AtomicBoolean();

		this.held.forwardLater(acknowledgement(7), 50, () -> forwardedAgain.set(true));

		await().atMost(Duration.ofSeconds(5)).until(() -> this.held.size() == 0);
		verify(this.channel, timeout(5000)).isOpen();
		assertThat(forwardedAgain).isFalse();
		verify(this.channel, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
	}

	@Test
	void containerThatStopsConsumingGetsBackAMessageWaitingToBeForwardedAgain() throws Exception {
		AtomicBoolean forwardedAgain = new AtomicBoolean();
		this.held.forwardLater(acknowledgement(8), Duration.ofHours(1).toMillis(), () -> forwardedAgain.set(true));

		this.held.giveBack(this.channel);

		verify(this.channel).basicNack(8, false, true);
		assertThat(forwardedAgain).isFalse();
	}

	@Test
	void messageWhosePauseCannotBeScheduledGoesBackAtOnce() throws Exception {
		this.executors.close(Duration.ZERO);

		this.held.requeueLater(acknowledgement(5), Duration.ofHours(1).toMillis());

		verify(this.channel).basicNack(5, false, true);
	}

	private Acknowledgement acknowledgement(long deliveryTag) {
		return new Acknowledgement(this.channel, message(deliveryTag));
	}

	private static Message message(long deliveryTag) {
		MessageProperties properties = new MessageProperties();
		properties.setDeliveryTag(deliveryTag);
		return new Message(new byte[0], properties);
	}

}
