package io.github.tieredretry.internal.settlement;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.amqp.Consumer;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.event.RetryEventPublisher;
import io.github.tieredretry.internal.forwarding.ForwardFailedException;
import io.github.tieredretry.internal.forwarding.ForwardFailurePause;
import io.github.tieredretry.internal.forwarding.MessageForwarder;
import io.github.tieredretry.internal.forwarding.RetryExecutors;
import io.github.tieredretry.internal.headers.FailureDetails;
import io.github.tieredretry.internal.policy.FailureDecision;
import io.github.tieredretry.internal.policy.RetryState;
import io.github.tieredretry.observation.RetryObservations;
import io.github.tieredretry.policy.ParkedReason;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyBoolean;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.timeout;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;

/**
 * Tests for {@link ForwardSender}: how many failed messages a consumer holds while the
 * broker blocks publishing, pauses per target, and what becomes of an original when its
 * forward is settled.
 */
class ForwardSenderTests {

	private static final Instant NOW = Instant.parse("2026-03-01T10:00:00Z");

	private static final String PARKING_LOT = "retry.parking-lot";

	private final RetryExecutors executors = new RetryExecutors();

	private final MessageForwarder forwarder = mock(MessageForwarder.class);

	private final List<CompletableFuture<Void>> forwards = new CopyOnWriteArrayList<>();

	private final Channel consumer = mock(Channel.class);

	@BeforeEach
	void everyForwardWaitsForTheTestToSettleIt() {
		given(this.forwarder.toTier(anyString(), any(AMQP.BasicProperties.class), any(byte[].class)))
			.willAnswer((invocation) -> newForward());
		given(this.forwarder.toParkingLot(any(AMQP.BasicProperties.class), any(byte[].class)))
			.willAnswer((invocation) -> newForward());
		given(this.consumer.isOpen()).willReturn(true);
	}

	@AfterEach
	void closeExecutors() {
		this.executors.close(Duration.ofSeconds(1));
	}

	@Test
	void whileTheBrokerBlocksPublishingAConsumerHoldsAtMostItsLimitAndRequeuesTheRestAtOnce() throws Exception {
		given(this.forwarder.isBlocked()).willReturn(true);
		ForwardSender sender = sender(2, Duration.ofMinutes(1));

		sender.send(retry(1, false), acknowledgement(this.consumer, 1));
		sender.send(retry(2, false), acknowledgement(this.consumer, 2));
		sender.send(retry(3, false), acknowledgement(this.consumer, 3));

		verify(this.forwarder, times(2)).toTier(anyString(), any(AMQP.BasicProperties.class), any(byte[].class));
		verify(this.consumer).basicNack(3, false, true);
		verify(this.consumer, never()).basicNack(1, false, true);
		verify(this.consumer, never()).basicNack(2, false, true);
	}

	@Test
	void messageHeldBackAgainGoesBackToItsQueueOnlyAfterThePause() throws Exception {
		given(this.forwarder.isBlocked()).willReturn(true);
		ForwardSender sender = sender(1, Duration.ofMillis(400));
		sender.send(retry(1, false), acknowledgement(this.consumer, 1));

		long heldBack = System.nanoTime();
		sender.send(retry(2, true), acknowledgement(this.consumer, 2));

		verify(this.consumer, timeout(5000)).basicNack(2, false, true);
		assertThat(Duration.ofNanos(System.nanoTime() - heldBack)).isGreaterThanOrEqualTo(Duration.ofMillis(350));
	}

	@Test
	void holdLimitCountsTheForwardsOfEachConsumerChannelApart() throws Exception {
		given(this.forwarder.isBlocked()).willReturn(true);
		Channel otherConsumer = mock(Channel.class);
		ForwardSender sender = sender(1, Duration.ofMinutes(1));

		sender.send(retry(1, false), acknowledgement(this.consumer, 1));
		sender.send(retry(1, false), acknowledgement(otherConsumer, 1));

		verify(this.forwarder, times(2)).toTier(anyString(), any(AMQP.BasicProperties.class), any(byte[].class));
		verify(this.consumer, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
		verify(otherConsumer, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
	}

	@Test
	void settledForwardFreesItsPlaceInTheConsumersHold() throws Exception {
		given(this.forwarder.isBlocked()).willReturn(true);
		ForwardSender sender = sender(1, Duration.ofMinutes(1));
		sender.send(retry(1, false), acknowledgement(this.consumer, 1));

		this.forwards.get(0).complete(null);
		verify(this.consumer, timeout(5000)).basicAck(1, false);
		sender.send(retry(2, false), acknowledgement(this.consumer, 2));

		verify(this.forwarder, times(2)).toTier(anyString(), any(AMQP.BasicProperties.class), any(byte[].class));
		verify(this.consumer, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
	}

	@Test
	void aConsumerAtItsLimitStillHoldsAMessageTheBrokerHasCountedAReturnOf() throws Exception {
		given(this.forwarder.isBlocked()).willReturn(true);
		ForwardSender sender = sender(1, Duration.ofMinutes(1));
		sender.send(retry(1, false), acknowledgement(this.consumer, 1));

		// Given back once already: on a quorum queue of RabbitMQ 4.0 to 4.2 a second
		// return would spend another of its lives.
		Message returned = message(2, true);
		returned.getMessageProperties().setHeader(RetryHeaders.BROKER_DELIVERY_COUNT, 1L);
		sender.send(retry(returned), new Acknowledgement(this.consumer, returned));

		verify(this.forwarder, times(2)).toTier(anyString(), any(AMQP.BasicProperties.class), any(byte[].class));
		verify(this.consumer, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
	}

	@Test
	void failedForwardsSlowDownOnlyTheirOwnTargetAndASuccessEndsThePause() throws Exception {
		ForwardSender sender = sender(10, Duration.ofMinutes(1));

		sender.send(park(1), acknowledgement(this.consumer, 1));
		this.forwards.get(0)
			.completeExceptionally(
					new ForwardFailedException(ForwardFailedException.Kind.RETURNED, "parking lot is gone"));
		// Held and forwarded again, never given back to its queue.
		await().atMost(Duration.ofSeconds(5)).until(() -> this.forwards.size() == 2);
		verify(this.consumer, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());

		assertThat(sender.pause(PARKING_LOT).consecutiveFailures()).isEqualTo(1);
		assertThat(sender.pause("retry.delay.1s").consecutiveFailures()).isZero();

		this.forwards.get(1).complete(null);
		verify(this.consumer, timeout(5000)).basicAck(1, false);
		assertThat(sender.pause(PARKING_LOT).consecutiveFailures()).isZero();
	}

	@Test
	void confirmedForwardWhoseAckThreadIsGoneHasItsOriginalRequeuedNotLost() throws Exception {
		ForwardSender sender = sender(10, Duration.ofMinutes(1));
		sender.send(retry(1, false), acknowledgement(this.consumer, 1));
		this.executors.close(Duration.ZERO);

		this.forwards.get(0).complete(null);

		verify(this.consumer).basicNack(1, false, true);
		verify(this.consumer, never()).basicAck(anyLong(), anyBoolean());
	}

	/**
	 * The same forwarding path for a listener of the RabbitMQ AMQP 1.0 client, whose
	 * deliveries are settled through their consumer context: accepted once the forward is
	 * confirmed, released to give them back.
	 */
	@Nested
	class OverAmqp10 {

		private final Object listener = new Object();

		@Test
		void whileTheBrokerBlocksPublishingTheListenerHoldsAtMostItsLimitAndReleasesTheRest() {
			given(ForwardSenderTests.this.forwarder.isBlocked()).willReturn(true);
			ForwardSender sender = sender(2, Duration.ofMinutes(1));
			Consumer.Context first = mock(Consumer.Context.class);
			Consumer.Context second = mock(Consumer.Context.class);
			Consumer.Context third = mock(Consumer.Context.class);

			sender.send(retry(1, false), new AmqpSettlement(first, this.listener));
			sender.send(retry(2, false), new AmqpSettlement(second, this.listener));
			sender.send(retry(3, false), new AmqpSettlement(third, this.listener));

			verify(ForwardSenderTests.this.forwarder, times(2)).toTier(anyString(), any(AMQP.BasicProperties.class),
					any(byte[].class));
			verify(third).requeue();
			verify(first, never()).requeue();
			verify(second, never()).requeue();
		}

		@Test
		void failedForwardsSlowDownOnlyTheirOwnTargetAndTheMessageIsHeldNotReleased() {
			ForwardSender sender = sender(10, Duration.ofMinutes(1));
			Consumer.Context context = mock(Consumer.Context.class);

			sender.send(park(1), new AmqpSettlement(context, this.listener));
			ForwardSenderTests.this.forwards.get(0)
				.completeExceptionally(
						new ForwardFailedException(ForwardFailedException.Kind.RETURNED, "parking lot is gone"));
			await().atMost(Duration.ofSeconds(5)).until(() -> ForwardSenderTests.this.forwards.size() == 2);

			verify(context, never()).requeue();
			assertThat(sender.pause(PARKING_LOT).consecutiveFailures()).isEqualTo(1);
			assertThat(sender.pause("retry.delay.1s").consecutiveFailures()).isZero();
			ForwardSenderTests.this.forwards.get(1).complete(null);
			verify(context, timeout(5000)).accept();
			assertThat(sender.pause(PARKING_LOT).consecutiveFailures()).isZero();
		}

		@Test
		void messageHeldThroughAPauseIsReleasedWhenTheApplicationStops() {
			HeldMessages held = new HeldMessages(ForwardSenderTests.this.executors);
			ForwardSender sender = new ForwardSender(ForwardSenderTests.this.forwarder,
					ForwardSenderTests.this.executors, notifications(),
					() -> new ForwardFailurePause(Duration.ofMinutes(1), Duration.ofMinutes(1)), Duration.ofMinutes(1),
					10, held, RetryObservations.DISABLED);
			Consumer.Context context = mock(Consumer.Context.class);
			sender.send(retry(1, false), new AmqpSettlement(context, this.listener));
			ForwardSenderTests.this.forwards.get(0).completeExceptionally(new IllegalStateException("no confirm"));
			await().atMost(Duration.ofSeconds(5)).until(() -> held.size() == 1);

			held.stopHolding();

			verify(context).requeue();
			verify(context, never()).accept();
			assertThat(held.size()).isZero();
			assertThat(ForwardSenderTests.this.forwards).hasSize(1);
		}

		@Test
		void forwardIsObservedAsOverAmqp091() {
			List<Observation.Context> stopped = new CopyOnWriteArrayList<>();
			ObservationRegistry registry = ObservationRegistry.create();
			registry.observationConfig().observationHandler(new ObservationHandler<>() {

				@Override
				public void onStop(Observation.Context context) {
					stopped.add(context);
				}

				@Override
				public boolean supportsContext(Observation.Context context) {
					return true;
				}

			});
			ForwardSender sender = new ForwardSender(ForwardSenderTests.this.forwarder,
					ForwardSenderTests.this.executors, notifications(),
					() -> new ForwardFailurePause(Duration.ZERO, Duration.ZERO), Duration.ofMinutes(1), 10,
					new HeldMessages(ForwardSenderTests.this.executors), new RetryObservations(registry, null, null));
			Consumer.Context context = mock(Consumer.Context.class);

			sender.send(retry(1, false), new AmqpSettlement(context, this.listener));
			ForwardSenderTests.this.forwards.get(0).complete(null);

			verify(context, timeout(5000)).accept();
			assertThat(stopped).extracting(Observation.Context::getName).containsExactly("rabbitmq.retry.forward");
			assertThat(stopped.get(0).getLowCardinalityKeyValue("outcome").getValue()).isEqualTo("retried");
		}

	}

	private static RetryNotifications notifications() {
		return new RetryNotifications("OrderListener#onOrder", 3, new RetryEventPublisher((event) -> {
		}, Runnable::run));
	}

	private CompletableFuture<Void> newForward() {
		CompletableFuture<Void> forward = new CompletableFuture<>();
		this.forwards.add(forward);
		return forward;
	}

	private ForwardSender sender(int holdLimit, Duration blockedRequeuePause) {
		RetryEventPublisher events = new RetryEventPublisher((event) -> {
		}, Runnable::run);
		return new ForwardSender(this.forwarder, this.executors,
				new RetryNotifications("OrderListener#onOrder", 3, events),
				() -> new ForwardFailurePause(Duration.ZERO, Duration.ZERO), blockedRequeuePause, holdLimit,
				new HeldMessages(this.executors), RetryObservations.DISABLED);
	}

	private static Acknowledgement acknowledgement(Channel channel, long deliveryTag) {
		return new Acknowledgement(channel, message(deliveryTag, false));
	}

	private static Forward retry(long deliveryTag, boolean redelivered) {
		return retry(message(deliveryTag, redelivered));
	}

	private static Forward retry(Message message) {
		FailureDecision.Retry decision = new FailureDecision.Retry(1, Duration.ofSeconds(1), Duration.ofSeconds(1),
				NOW.plusSeconds(1), NOW);
		IllegalStateException failure = new IllegalStateException("down");
		return new Forward(message, "orders", RetryState.FIRST_DELIVERY,
				new Forward.Retry(decision, details(failure), failure), "retry.delay.1s", new AMQP.BasicProperties(),
				new byte[0]);
	}

	private static Forward park(long deliveryTag) {
		IllegalStateException failure = new IllegalStateException("down");
		return new Forward(message(deliveryTag, false), "orders", RetryState.FIRST_DELIVERY,
				new Forward.Park(new FailureDecision.Park(ParkedReason.EXHAUSTED, NOW), details(failure), failure),
				PARKING_LOT, new AMQP.BasicProperties(), new byte[0]);
	}

	private static FailureDetails details(Throwable failure) {
		return new FailureDetails(failure.getClass().getName(), String.valueOf(failure.getMessage()), null);
	}

	private static Message message(long deliveryTag, boolean redelivered) {
		MessageProperties properties = new MessageProperties();
		properties.setDeliveryTag(deliveryTag);
		properties.setRedelivered(redelivered);
		properties.setConsumerQueue("orders");
		return new Message(new byte[0], properties);
	}

}
