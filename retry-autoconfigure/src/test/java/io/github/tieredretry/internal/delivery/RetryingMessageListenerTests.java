package io.github.tieredretry.internal.delivery;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Envelope;
import io.github.tieredretry.annotation.Backend;
import io.github.tieredretry.event.ForwardFailedEvent;
import io.github.tieredretry.event.MessageParkedEvent;
import io.github.tieredretry.event.MessageRecoveredEvent;
import io.github.tieredretry.event.RetryScheduledEvent;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.event.RetryEventPublisher;
import io.github.tieredretry.internal.forwarding.ForwardFailedException;
import io.github.tieredretry.internal.forwarding.MessageForwarder;
import io.github.tieredretry.internal.forwarding.RetryExecutors;
import io.github.tieredretry.internal.headers.FailureHeaderSettings;
import io.github.tieredretry.internal.policy.BrokerDelayedRetry;
import io.github.tieredretry.internal.policy.RetryDecider;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.internal.settlement.Acknowledgement;
import io.github.tieredretry.internal.settlement.ConsumerChannels;
import io.github.tieredretry.internal.settlement.ForwardSender;
import io.github.tieredretry.internal.settlement.ForwardSenders;
import io.github.tieredretry.internal.settlement.HeldMessages;
import io.github.tieredretry.internal.settlement.RetryNotifications;
import io.github.tieredretry.listener.AsyncAttemptTimeoutException;
import io.github.tieredretry.listener.BatchListenerFailedException;
import io.github.tieredretry.listener.ListenerBackend;
import io.github.tieredretry.listener.ListenerGate;
import io.github.tieredretry.listener.RetryAfterResolver;
import io.github.tieredretry.listener.RetryFailureClassifier;
import io.github.tieredretry.listener.RetryableListenerInfo;
import io.github.tieredretry.observation.RetryObservations;
import io.github.tieredretry.policy.BackendChoice;
import io.github.tieredretry.policy.EffectiveRetryPolicy;
import io.github.tieredretry.policy.ParkedReason;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.mockito.ArgumentCaptor;

import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.ImmediateAcknowledgeAmqpException;
import org.springframework.amqp.ImmediateRequeueAmqpException;
import org.springframework.amqp.core.BatchMessageListener;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageListener;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.listener.ListenerExecutionFailedException;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareBatchMessageListener;
import org.springframework.amqp.support.converter.MessageConversionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyBoolean;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.BDDMockito.given;
import static org.mockito.BDDMockito.willAnswer;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.timeout;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;

/**
 * Tests for {@link RetryingMessageListener} with its real {@link ForwardSender},
 * {@link Acknowledgement} and {@link RetryNotifications}, a fake forwarder whose confirms
 * the test completes, and a mock consumer channel: no broker.
 */
class RetryingMessageListenerTests {

	private static final Instant NOW = Instant.parse("2026-03-01T10:00:00Z");

	private static final String QUEUE = "orders";

	private static final String PARKING_LOT = "retry.parking-lot";

	private static final TierLadder TIERS = TierLadder
		.of(List.of(Duration.ofSeconds(1), Duration.ofSeconds(10), Duration.ofMinutes(1)));

	private static final byte[] BODY = "{\"order\":42}".getBytes();

	private final RetryExecutors executors = new RetryExecutors();

	private final MessageForwarder forwarder = mock(MessageForwarder.class);

	private final CompletableFuture<Void> confirm = new CompletableFuture<>();

	private final Channel channel = mock(Channel.class);

	private final List<Object> events = new CopyOnWriteArrayList<>();

	private final DeliveryCapture capture = new DeliveryCapture();

	private final RecordingGate gate = new RecordingGate(ListenerGate.Passage.PASS);

	private final List<RetryFailureClassifier> classifiers = new ArrayList<>();

	private final List<RetryAfterResolver> retryAfterResolvers = new ArrayList<>();

	private Duration failurePause = Duration.ZERO;

	private Duration asyncAttemptTimeout = Duration.ofSeconds(5);

	@BeforeEach
	void forwardsWaitForTheTestsConfirm() {
		given(this.forwarder.toTier(anyString(), any(AMQP.BasicProperties.class), any(byte[].class)))
			.willReturn(this.confirm);
		given(this.forwarder.toParkingLot(any(AMQP.BasicProperties.class), any(byte[].class))).willReturn(this.confirm);
		given(this.channel.isOpen()).willReturn(true);
	}

	@AfterEach
	void closeExecutors() {
		this.executors.close(Duration.ofSeconds(1));
	}

	@Test
	void processedMessageIsAckedAndNothingIsForwarded() throws Exception {
		RetryingMessageListener wrapper = wrapper((message) -> {
		}, policy(3));

		wrapper.onMessage(message(1, 0, null), this.channel);

		verify(this.channel).basicAck(1, false);
		verifyNothingForwarded();
		assertThat(this.gate.outcomes).containsExactly("succeeded");
	}

	@Test
	void retryableFailureGoesToTheTierOfTheFirstDelayAndIsAckedOnlyOnceTheForwardIsConfirmed() throws Exception {
		RetryingMessageListener wrapper = wrapper(failing(new IllegalStateException("inventory service down")),
				policy(3));

		wrapper.onMessage(message(7, 0, null), this.channel);

		Map<String, Object> headers = forwardedToTier().getHeaders();
		assertThat(headers).containsEntry(RetryHeaders.COUNT, 1L)
			.containsEntry(RetryHeaders.QUEUE, QUEUE)
			.containsEntry(RetryHeaders.TIER, "1s")
			.containsEntry(RetryHeaders.DUE, NOW.plusSeconds(1).toEpochMilli())
			.containsEntry(RetryHeaders.FIRST_FAILURE, NOW.toEpochMilli())
			.containsEntry(RetryHeaders.EXCEPTION, IllegalStateException.class.getName())
			.containsEntry(RetryHeaders.ERROR, "inventory service down");
		verify(this.channel, never()).basicAck(anyLong(), anyBoolean());
		assertThat(this.events).isEmpty();

		this.confirm.complete(null);

		verify(this.channel, timeout(5000)).basicAck(7, false);
		await().atMost(Duration.ofSeconds(5)).until(() -> !this.events.isEmpty());
		assertThat(this.events).singleElement()
			.isEqualTo(new RetryScheduledEvent(QUEUE, 1, "1s", Duration.ofSeconds(1), NOW.plusSeconds(1),
					IllegalStateException.class.getName(), "m-7"));
	}

	@Test
	void failureOfARetriedMessageSchedulesTheNextRetryAndKeepsItsFirstFailure() throws Exception {
		RetryingMessageListener wrapper = wrapper(failing(new IllegalStateException("still down")), policy(3));
		Instant firstFailure = NOW.minusSeconds(5);

		wrapper.onMessage(retried(2, 1, firstFailure, NOW.minusMillis(1)), this.channel);

		AMQP.BasicProperties forwarded = forwardedToTier();
		assertThat(forwarded.getHeaders()).containsEntry(RetryHeaders.COUNT, 2L)
			.containsEntry(RetryHeaders.TIER, "10s")
			.containsEntry(RetryHeaders.DUE, NOW.plusSeconds(10).toEpochMilli())
			.containsEntry(RetryHeaders.FIRST_FAILURE, firstFailure.toEpochMilli());
		assertThat(forwarded.getDeliveryMode()).as("persistent").isEqualTo(2);
	}

	@Test
	void failedForwardHoldsTheMessageUnackedAndForwardsItAgainNeverGivingItBack() throws Exception {
		CompletableFuture<Void> secondConfirm = new CompletableFuture<>();
		given(this.forwarder.toTier(anyString(), any(AMQP.BasicProperties.class), any(byte[].class)))
			.willReturn(this.confirm, secondConfirm);
		RetryingMessageListener wrapper = wrapper(failing(new IllegalStateException("down")), policy(3));

		wrapper.onMessage(message(3, 0, null), this.channel);
		this.confirm.completeExceptionally(
				new ForwardFailedException(ForwardFailedException.Kind.NACKED, "nacked by the broker"));

		ArgumentCaptor<AMQP.BasicProperties> properties = ArgumentCaptor.forClass(AMQP.BasicProperties.class);
		verify(this.forwarder, timeout(5000).times(2)).toTier(eq(QUEUE), properties.capture(), eq(BODY));
		assertThat(properties.getAllValues().get(1)).isSameAs(properties.getAllValues().get(0));
		verify(this.channel, never()).basicAck(anyLong(), anyBoolean());
		await().atMost(Duration.ofSeconds(5)).until(() -> !this.events.isEmpty());
		assertThat(this.events).singleElement().isInstanceOfSatisfying(ForwardFailedEvent.class, (event) -> {
			assertThat(event.target()).isEqualTo("retry.delay.1s");
			assertThat(event.cause()).contains("nacked by the broker");
		});

		secondConfirm.complete(null);

		verify(this.channel, timeout(5000)).basicAck(3, false);
		verify(this.channel, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
		verify(this.channel, never()).basicReject(anyLong(), anyBoolean());
	}

	@Test
	void failedForwardIsTriedAgainOnlyAfterThePause() throws Exception {
		this.failurePause = Duration.ofMillis(400);
		RetryingMessageListener wrapper = wrapper(failing(new IllegalStateException("down")), policy(3));

		wrapper.onMessage(message(3, 0, null), this.channel);
		long failed = System.nanoTime();
		this.confirm.completeExceptionally(
				new ForwardFailedException(ForwardFailedException.Kind.TIMEOUT, "no confirm within 5000 ms"));

		verify(this.forwarder, timeout(5000).times(2)).toTier(eq(QUEUE), any(AMQP.BasicProperties.class), eq(BODY));
		assertThat(Duration.ofNanos(System.nanoTime() - failed)).isGreaterThanOrEqualTo(Duration.ofMillis(350));
		verify(this.channel, never()).basicAck(anyLong(), anyBoolean());
		verify(this.channel, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
	}

	@Test
	void forwarderThatThrowsCountsAsAFailedForward() throws Exception {
		given(this.forwarder.toTier(anyString(), any(AMQP.BasicProperties.class), any(byte[].class)))
			.willThrow(new IllegalStateException("no connection"))
			.willReturn(this.confirm);
		RetryingMessageListener wrapper = wrapper(failing(new IllegalStateException("down")), policy(3));

		wrapper.onMessage(message(4, 0, null), this.channel);

		verify(this.forwarder, timeout(5000).times(2)).toTier(eq(QUEUE), any(AMQP.BasicProperties.class), eq(BODY));
		this.confirm.complete(null);
		verify(this.channel, timeout(5000)).basicAck(4, false);
		verify(this.channel, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
	}

	@Test
	void failedForwardOfAMessageWhoseChannelHasClosedIsNotTriedAgain() throws Exception {
		RetryingMessageListener wrapper = wrapper(failing(new IllegalStateException("down")), policy(3));

		wrapper.onMessage(message(5, 0, null), this.channel);
		// The broker put the message back in its queue: forwarding it now would make a
		// duplicate.
		given(this.channel.isOpen()).willReturn(false);
		this.confirm.completeExceptionally(
				new ForwardFailedException(ForwardFailedException.Kind.PUBLISH_ERROR, "connection lost"));

		await().atMost(Duration.ofSeconds(5)).until(() -> !this.events.isEmpty());
		// Whether to forward it again is decided on the acks thread, after the event:
		// once a later task has run there, it has been decided.
		CompletableFuture.runAsync(() -> {
		}, this.executors.acks()).get(5, TimeUnit.SECONDS);
		verify(this.forwarder).toTier(eq(QUEUE), any(AMQP.BasicProperties.class), eq(BODY));
		verify(this.channel, never()).basicAck(anyLong(), anyBoolean());
		verify(this.channel, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
	}

	@Test
	void messageThatFailedItsLastRetryIsParkedAsExhaustedWithoutItsSchedulingHeaders() throws Exception {
		RetryingMessageListener wrapper = wrapper(failing(new IllegalStateException("still down")), policy(3));
		Instant firstFailure = NOW.minusSeconds(71);

		wrapper.onMessage(retried(5, 3, firstFailure, NOW.minusMillis(1)), this.channel);

		Map<String, Object> headers = forwardedToParkingLot().getHeaders();
		assertThat(headers).containsEntry(RetryHeaders.PARKED_REASON, "exhausted")
			.containsEntry(RetryHeaders.PARKED_AT, NOW.toEpochMilli())
			.containsEntry(RetryHeaders.COUNT, 3L)
			.containsEntry(RetryHeaders.QUEUE, QUEUE)
			.containsEntry(RetryHeaders.FIRST_FAILURE, firstFailure.toEpochMilli())
			.containsEntry(RetryHeaders.EXCEPTION, IllegalStateException.class.getName())
			.doesNotContainKeys(RetryHeaders.DUE, RetryHeaders.TIER);
		verify(this.channel, never()).basicAck(anyLong(), anyBoolean());

		this.confirm.complete(null);

		verify(this.channel, timeout(5000)).basicAck(5, false);
		await().atMost(Duration.ofSeconds(5)).until(() -> !this.events.isEmpty());
		assertThat(this.events).singleElement()
			.isEqualTo(new MessageParkedEvent(QUEUE, 3, ParkedReason.EXHAUSTED, IllegalStateException.class.getName(),
					"m-5"));
	}

	@Test
	void notRetryableFailureIsParkedAtOnceWithoutItsImmediateRetries() throws Exception {
		AtomicInteger calls = new AtomicInteger();
		RetryingMessageListener wrapper = wrapper((message) -> {
			calls.incrementAndGet();
			throw new IllegalArgumentException("negative quantity");
		}, policy(3, 2, List.of(IllegalArgumentException.class)));

		wrapper.onMessage(message(8, 0, null), this.channel);

		assertThat(calls).hasValue(1);
		assertThat(forwardedToParkingLot().getHeaders()).containsEntry(RetryHeaders.PARKED_REASON, "not-retryable")
			.containsEntry(RetryHeaders.COUNT, 0L)
			.containsEntry(RetryHeaders.ERROR, "negative quantity");
		assertThat(this.gate.outcomes).as("a bad message says nothing about the downstream").containsExactly("ignored");
	}

	@Test
	void unconvertiblePayloadIsParkedAsNotRetryableWithTheListenersOwnException() throws Exception {
		RetryingMessageListener wrapper = wrapper((message) -> {
			throw new ListenerExecutionFailedException("Listener threw exception",
					new MessageConversionException("Cannot convert from [byte[]] to [Order]"), message);
		}, policy(3));

		wrapper.onMessage(message(9, 0, null), this.channel);

		assertThat(forwardedToParkingLot().getHeaders()).containsEntry(RetryHeaders.PARKED_REASON, "not-retryable")
			.containsEntry(RetryHeaders.EXCEPTION, MessageConversionException.class.getName());
	}

	@Test
	void listenerThatRefusesAMessageForGoodHasItParkedRatherThanDropped() throws Exception {
		RetryingMessageListener wrapper = wrapper(failing(new AmqpRejectAndDontRequeueException("poison")), policy(3));

		wrapper.onMessage(message(10, 0, null), this.channel);

		assertThat(forwardedToParkingLot().getHeaders()).containsEntry(RetryHeaders.PARKED_REASON, "not-retryable");
		verify(this.channel, never()).basicReject(anyLong(), anyBoolean());
	}

	@Test
	void producerSideBatchIsParkedWholeWithoutInvokingTheListener() throws Exception {
		AtomicInteger calls = new AtomicInteger();
		RetryingMessageListener wrapper = wrapper((message) -> calls.incrementAndGet(), policy(3));
		Message batch = message(11, 0, null);
		batch.getMessageProperties().setHeader("springBatchFormat", "lengthHeader4");

		wrapper.onMessage(batch, this.channel);

		assertThat(calls).hasValue(0);
		assertThat(forwardedToParkingLot().getHeaders()).containsEntry(RetryHeaders.PARKED_REASON, "not-retryable")
			.containsEntry(RetryHeaders.EXCEPTION, ProducerBatchNotSupportedException.class.getName());
	}

	@Test
	void stackOverflowErrorIsAListenerFailureThatIsRetriedNotRethrown() throws Exception {
		RetryingMessageListener wrapper = wrapper((message) -> {
			throw new StackOverflowError();
		}, policy(3));

		wrapper.onMessage(message(12, 0, null), this.channel);

		assertThat(forwardedToTier().getHeaders()).containsEntry(RetryHeaders.EXCEPTION,
				StackOverflowError.class.getName());
	}

	@Test
	void otherVirtualMachineErrorsAreRethrownAndTheMessageIsLeftToTheBroker() throws Exception {
		RetryingMessageListener wrapper = wrapper((message) -> {
			throw new OutOfMemoryError("Java heap space");
		}, policy(3));

		assertThatExceptionOfType(OutOfMemoryError.class)
			.isThrownBy(() -> wrapper.onMessage(message(13, 0, null), this.channel));

		verifyNothingForwarded();
		verify(this.channel, never()).basicAck(anyLong(), anyBoolean());
		verify(this.channel, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
	}

	@Test
	void immediateRetriesRunOnAFirstDeliveryBeforeAnyTierIsUsed() throws Exception {
		AtomicInteger calls = new AtomicInteger();
		RetryingMessageListener wrapper = wrapper((message) -> {
			if (calls.incrementAndGet() < 3) {
				throw new IllegalStateException("blip");
			}
		}, policy(3, 2, List.of()));

		wrapper.onMessage(message(14, 0, null), this.channel);

		assertThat(calls).hasValue(3);
		verify(this.channel).basicAck(14, false);
		verifyNothingForwarded();
	}

	@Test
	void retriedMessageGetsNoImmediateRetries() throws Exception {
		AtomicInteger calls = new AtomicInteger();
		RetryingMessageListener wrapper = wrapper((message) -> {
			calls.incrementAndGet();
			throw new IllegalStateException("down");
		}, policy(3, 2, List.of()));

		wrapper.onMessage(retried(15, 1, NOW.minusSeconds(2), NOW.minusMillis(1)), this.channel);

		assertThat(calls).hasValue(1);
		assertThat(forwardedToTier().getHeaders()).containsEntry(RetryHeaders.COUNT, 2L);
	}

	@Test
	void messageThatArrivesBeforeItIsDueWaitsInATierAgainWithoutInvokingTheListener() throws Exception {
		AtomicInteger calls = new AtomicInteger();
		RetryingMessageListener wrapper = wrapper((message) -> calls.incrementAndGet(), policy(3));
		Instant due = NOW.plusSeconds(10);

		wrapper.onMessage(retried(16, 1, NOW.minusSeconds(50), due), this.channel);

		assertThat(calls).hasValue(0);
		Map<String, Object> headers = forwardedToTier().getHeaders();
		assertThat(headers).containsEntry(RetryHeaders.TIER, "10s")
			.containsEntry(RetryHeaders.DUE, due.toEpochMilli())
			.containsEntry(RetryHeaders.COUNT, 1L);
		this.confirm.complete(null);
		verify(this.channel, timeout(5000)).basicAck(16, false);
	}

	@Test
	void retriedMessageThatIsProcessedIsReportedAsRecovered() throws Exception {
		RetryingMessageListener wrapper = wrapper((message) -> {
		}, policy(3));

		wrapper.onMessage(retried(17, 2, NOW.minusSeconds(11), NOW.minusMillis(1)), this.channel);

		verify(this.channel).basicAck(17, false);
		await().atMost(Duration.ofSeconds(5)).until(() -> !this.events.isEmpty());
		assertThat(this.events).singleElement().isInstanceOfSatisfying(MessageRecoveredEvent.class, (event) -> {
			assertThat(event.retryCount()).isEqualTo(2);
			assertThat(event.recoveryTime()).isEqualTo(Duration.ofSeconds(11));
		});
	}

	@Test
	void listenerThatAsksForARequeueHasItsMessageRequeuedAndOneThatAsksForAnAckHasItAcked() throws Exception {
		wrapper(failing(new ImmediateRequeueAmqpException("later")), policy(3)).onMessage(message(18, 0, null),
				this.channel);
		wrapper(failing(new ImmediateAcknowledgeAmqpException("done")), policy(3)).onMessage(message(19, 0, null),
				this.channel);

		verify(this.channel).basicNack(18, false, true);
		verify(this.channel).basicAck(19, false);
		verifyNothingForwarded();
	}

	@Test
	void stoppingGateLeavesTheMessageToItsChannelWithoutInvokingTheListener() throws Exception {
		// Given back while the consumer still consumes, it could come back to it: its
		// channel gives it back once the container stops consuming.
		AtomicInteger calls = new AtomicInteger();
		RetryingMessageListener wrapper = wrapper((message) -> calls.incrementAndGet(), policy(3),
				new RecordingGate(ListenerGate.Passage.STOPPED));

		wrapper.onMessage(message(20, 0, null), this.channel);

		assertThat(calls).hasValue(0);
		verify(this.channel, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
		verify(this.channel, never()).basicAck(anyLong(), anyBoolean());
		verifyNothingForwarded();
	}

	@Test
	void probeThatFailsIsHeldForTheNextProbeNeitherRetriedNorGivenBack() throws Exception {
		RecordingGate probing = new RecordingGate(ListenerGate.Passage.PROBE);
		AtomicInteger attempts = new AtomicInteger();
		RetryingMessageListener wrapper = wrapper((message) -> {
			if (attempts.incrementAndGet() < 3) {
				throw new IllegalStateException("still down");
			}
		}, policy(3), probing);

		wrapper.onMessage(message(21, 0, null), this.channel);

		assertThat(attempts).hasValue(3);
		assertThat(probing.outcomes).containsExactly("failed", "failed", "succeeded");
		verify(this.channel).basicAck(21, false);
		verify(this.channel, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
		verify(this.channel, never()).basicReject(anyLong(), anyBoolean());
		verifyNothingForwarded();
	}

	@Test
	void pausedListenerMovesAMessageTheBrokerHasCountedReturnsOfThroughTheSmallestTierWithoutSpendingARetry()
			throws Exception {
		RecordingGate paused = new RecordingGate(ListenerGate.Passage.PASS);
		paused.paused = true;
		AtomicInteger invocations = new AtomicInteger();
		RetryingMessageListener wrapper = wrapper((message) -> invocations.incrementAndGet(), policy(3), paused);
		Message message = message(26, 0, null);
		message.getMessageProperties().setHeader(RetryHeaders.BROKER_DELIVERY_COUNT, 1L);
		message.getMessageProperties().setHeader(RetryHeaders.BROKER_ACQUIRED_COUNT, 3L);

		wrapper.onMessage(message, this.channel);

		assertThat(forwardedToTier().getHeaders()).containsEntry(RetryHeaders.TIER, "1s")
			.doesNotContainKeys(RetryHeaders.COUNT, RetryHeaders.DUE, RetryHeaders.BROKER_DELIVERY_COUNT,
					RetryHeaders.BROKER_ACQUIRED_COUNT);
		assertThat(invocations).hasValue(0);
		assertThat(paused.passages).isZero();
		this.confirm.complete(null);
		verify(this.channel, timeout(5000)).basicAck(26, false);
		verify(this.channel, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
	}

	@Test
	void failedProbeOfAMessageTheBrokerHasCountedReturnsOfIsMovedThroughATierNotHeld() throws Exception {
		RecordingGate probing = new RecordingGate(ListenerGate.Passage.PROBE);
		AtomicInteger attempts = new AtomicInteger();
		RetryingMessageListener wrapper = wrapper((message) -> {
			attempts.incrementAndGet();
			throw new IllegalStateException("still down");
		}, policy(3), probing);
		Message returned = message(29, 0, null);
		returned.getMessageProperties().setHeader(RetryHeaders.BROKER_DELIVERY_COUNT, 1L);

		wrapper.onMessage(returned, this.channel);

		assertThat(attempts).hasValue(1);
		assertThat(forwardedToTier().getHeaders()).containsEntry(RetryHeaders.TIER, "1s")
			.doesNotContainKeys(RetryHeaders.COUNT, RetryHeaders.BROKER_DELIVERY_COUNT);
		this.confirm.complete(null);
		verify(this.channel, timeout(5000)).basicAck(29, false);
		verify(this.channel, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
	}

	@Test
	void onTheBrokerBackendAFailureWithRetriesLeftGoesBackToItsQueueWithARejectAndNothingIsPublished()
			throws Exception {
		RetryingMessageListener wrapper = onTheBroker(failing(new IllegalStateException("down")), linearPolicy(3));

		wrapper.onMessage(message(40, 0, null), this.channel);

		verify(this.channel).basicReject(40, true);
		verify(this.channel, never()).basicAck(anyLong(), anyBoolean());
		verifyNothingForwarded();
		assertThat(this.events).singleElement().isInstanceOfSatisfying(RetryScheduledEvent.class, (event) -> {
			assertThat(event.retryCount()).isOne();
			assertThat(event.tier()).isEqualTo("broker");
			assertThat(event.delay()).isEqualTo(Duration.ofSeconds(1));
			assertThat(event.due()).isEqualTo(NOW.plusSeconds(1));
		});
	}

	@Test
	void onTheBrokerBackendTheRetryCountIsTheBrokersCountOfFailedDeliveries() throws Exception {
		List<Long> seen = new ArrayList<>();
		RetryingMessageListener wrapper = onTheBroker((message) -> {
			seen.add(message.getMessageProperties().getRetryCount());
			throw new IllegalStateException("down");
		}, linearPolicy(3));
		Message redelivered = message(41, 0, null);
		redelivered.getMessageProperties().setHeader(RetryHeaders.BROKER_DELIVERY_COUNT, 2L);

		wrapper.onMessage(redelivered, this.channel);

		assertThat(seen).containsExactly(2L);
		verify(this.channel).basicReject(41, true);
		assertThat(this.events).singleElement()
			.isInstanceOfSatisfying(RetryScheduledEvent.class, (event) -> assertThat(event.retryCount()).isEqualTo(3));
	}

	@Test
	void onTheBrokerBackendTheLastFailureIsParkedAsOnTheTiersWithTheBrokersCount() throws Exception {
		RetryingMessageListener wrapper = onTheBroker(failing(new IllegalStateException("still down")),
				linearPolicy(3));
		Message last = message(42, 0, null);
		last.getMessageProperties().setHeader(RetryHeaders.BROKER_DELIVERY_COUNT, 3L);

		wrapper.onMessage(last, this.channel);

		assertThat(forwardedToParkingLot().getHeaders()).containsEntry(RetryHeaders.PARKED_REASON, "exhausted")
			.containsEntry(RetryHeaders.COUNT, 3L)
			.containsEntry(RetryHeaders.QUEUE, QUEUE)
			.containsEntry(RetryHeaders.FIRST_FAILURE, NOW.minusSeconds(1 + 2 + 3).toEpochMilli())
			.doesNotContainKeys(RetryHeaders.BROKER_DELIVERY_COUNT);
		verify(this.channel, never()).basicReject(anyLong(), anyBoolean());
		this.confirm.complete(null);
		verify(this.channel, timeout(5000)).basicAck(42, false);
	}

	@Test
	void pausedListenerHoldsAMessageTheBrokerHasNeverCountedAReturnOf() throws Exception {
		RecordingGate paused = new RecordingGate(ListenerGate.Passage.PASS);
		paused.paused = true;
		RetryingMessageListener wrapper = wrapper((message) -> {
		}, policy(3), paused);

		wrapper.onMessage(message(27, 0, null), this.channel);

		assertThat(paused.passages).isOne();
		verify(this.channel).basicAck(27, false);
		verifyNothingForwarded();
	}

	@Test
	void messageWhoseChannelClosedWhileItWaitedAtTheGateIsLeftToTheBroker() throws Exception {
		AtomicInteger invocations = new AtomicInteger();
		RetryingMessageListener wrapper = wrapper((message) -> invocations.incrementAndGet(), policy(3));
		given(this.channel.isOpen()).willReturn(false);

		wrapper.onMessage(message(28, 0, null), this.channel);

		assertThat(invocations).hasValue(0);
		assertThat(this.gate.outcomes).containsExactly("ignored");
		verify(this.channel, never()).basicAck(anyLong(), anyBoolean());
		verify(this.channel, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
		verifyNothingForwarded();
	}

	@Test
	void classifierDecidesBeforeThePolicy() throws Exception {
		this.classifiers.add((listener, failure) -> (failure instanceof IllegalStateException)
				? RetryFailureClassifier.Classification.NOT_RETRYABLE
				: RetryFailureClassifier.Classification.UNDECIDED);
		RetryingMessageListener wrapper = wrapper(failing(new IllegalStateException("bad state")), policy(3));

		wrapper.onMessage(message(22, 0, null), this.channel);

		assertThat(forwardedToParkingLot().getHeaders()).containsEntry(RetryHeaders.PARKED_REASON, "not-retryable");
	}

	@Test
	void classifierRunsOncePerFailureEvenWithImmediateRetries() throws Exception {
		List<String> classified = new ArrayList<>();
		this.classifiers.add((listener, failure) -> {
			classified.add(failure.getMessage());
			return failure.getMessage().endsWith("2") ? RetryFailureClassifier.Classification.NOT_RETRYABLE
					: RetryFailureClassifier.Classification.UNDECIDED;
		});
		AtomicInteger calls = new AtomicInteger();
		RetryingMessageListener wrapper = wrapper((message) -> {
			throw new IllegalStateException("down " + calls.incrementAndGet());
		}, policy(3, 2, List.of()));

		wrapper.onMessage(message(29, 0, null), this.channel);

		// The first failure is retried at once; the second, not retryable, is parked.
		assertThat(calls).hasValue(2);
		assertThat(classified).containsExactly("down 1", "down 2");
		assertThat(forwardedToParkingLot().getHeaders()).containsEntry(RetryHeaders.PARKED_REASON, "not-retryable");
	}

	@Test
	void classifierThatThrowsLeavesTheDecisionToThePolicy() throws Exception {
		this.classifiers.add((listener, failure) -> {
			throw new IllegalStateException("classifier bug");
		});
		RetryingMessageListener wrapper = wrapper(failing(new IllegalStateException("down")), policy(3));

		wrapper.onMessage(message(23, 0, null), this.channel);

		assertThat(forwardedToTier().getHeaders()).containsEntry(RetryHeaders.COUNT, 1L);
	}

	@Test
	void messageWithoutItsConsumerQueueGoesBackToItsQueue() throws Exception {
		RetryingMessageListener wrapper = wrapper((message) -> {
		}, policy(3));
		Message message = message(24, 0, null);
		message.getMessageProperties().setConsumerQueue(null);

		wrapper.onMessage(message, this.channel);

		verify(this.channel, timeout(5000)).basicNack(24, false, true);
		verify(this.channel, never()).basicAck(anyLong(), anyBoolean());
		verifyNothingForwarded();
	}

	@Test
	void forwardedMessageCarriesThePropertiesAndBodyAsTheBrokerDeliveredThem() throws Exception {
		// No content type and no priority as delivered; Spring's converted properties
		// would invent both.
		AMQP.BasicProperties delivered = new AMQP.BasicProperties.Builder().messageId("raw-1")
			.headers(Map.of("tenant", "acme"))
			.build();
		MessageProperties converted = this.capture.converter()
			.toMessageProperties(delivered, new Envelope(25, false, "", QUEUE), "UTF-8");
		converted.setConsumerQueue(QUEUE);
		byte[] compressed = "compressed".getBytes();
		this.capture.bodyCapture().postProcessMessage(new Message(compressed, converted));
		Message decompressed = new Message(BODY, converted);
		RetryingMessageListener wrapper = wrapper(failing(new IllegalStateException("down")), policy(3));

		wrapper.onMessage(decompressed, this.channel);

		ArgumentCaptor<AMQP.BasicProperties> properties = ArgumentCaptor.forClass(AMQP.BasicProperties.class);
		verify(this.forwarder).toTier(eq(QUEUE), properties.capture(), eq(compressed));
		assertThat(properties.getValue().getContentType()).isNull();
		assertThat(properties.getValue().getPriority()).isNull();
		assertThat(properties.getValue().getMessageId()).isEqualTo("raw-1");
		assertThat(properties.getValue().getHeaders()).containsEntry("tenant", "acme")
			.containsEntry(RetryHeaders.COUNT, 1L);
	}

	/**
	 * A batch listener: each message of a batch is acked, retried or parked on its own.
	 */
	@Nested
	class BatchListeners {

		private final List<List<Message>> calls = new CopyOnWriteArrayList<>();

		@Test
		void messagesBeforeTheNamedOneAreAckedItIsRetriedAndTheOnesAfterItAreCalledAgainAtOnce() throws Exception {
			List<Message> batch = batch(5);
			RetryingBatchMessageListener wrapper = batchWrapper((messages) -> {
				if (messages.size() == 5) {
					throw new BatchListenerFailedException("order 2 not paid",
							new IllegalStateException("payment down"), 2);
				}
			}, policy(3));

			wrapper.onMessageBatch(batch, RetryingMessageListenerTests.this.channel);

			assertThat(this.calls).extracting(List::size).containsExactly(5, 2);
			assertThat(this.calls.get(1)).containsExactly(batch.get(3), batch.get(4));
			verifyAcked(1);
			verifyAcked(2);
			// 4 and 5 wait for 3's forward, to be acked with it.
			assertThat(ackedTags()).containsExactlyInAnyOrder(1L, 2L);
			AMQP.BasicProperties forwarded = forwardedToTier();
			assertThat(forwarded.getMessageId()).isEqualTo("m-3");
			assertThat(forwarded.getHeaders()).containsEntry(RetryHeaders.COUNT, 1L)
				.containsEntry(RetryHeaders.EXCEPTION, IllegalStateException.class.getName())
				.containsEntry(RetryHeaders.ERROR, "payment down");
			RetryingMessageListenerTests.this.confirm.complete(null);
			for (long tag : List.of(3L, 4L, 5L)) {
				verifyAcked(tag);
			}
		}

		@Test
		void processedMessagesOfABatchAreAckedWithOneMultipleAckAsSpringAcksAPlainBatch() throws Exception {
			RetryingBatchMessageListener wrapper = batchWrapper((messages) -> {
			}, policy(3));

			wrapper.onMessageBatch(batch(3), RetryingMessageListenerTests.this.channel);

			verify(RetryingMessageListenerTests.this.channel).basicAck(3, true);
			verify(RetryingMessageListenerTests.this.channel, never()).basicAck(anyLong(), eq(false));
		}

		@Test
		void processedMessagesWaitForAnEarlierMessageWhoseForwardIsConfirmedAndAreAckedWithItInOneMultipleAck()
				throws Exception {
			RetryingBatchMessageListener wrapper = failingFirstBatch();

			wrapper.onMessageBatch(batch(2), RetryingMessageListenerTests.this.channel);
			wrapper.onMessageBatch(List.of(message(3, 0, null), message(4, 0, null)),
					RetryingMessageListenerTests.this.channel);
			// Tag 1 waits for its forward's confirm: a multiple ack now would settle it
			// too.
			verify(RetryingMessageListenerTests.this.channel, never()).basicAck(anyLong(), anyBoolean());
			RetryingMessageListenerTests.this.confirm.complete(null);

			verify(RetryingMessageListenerTests.this.channel, timeout(5000)).basicAck(4, true);
			verify(RetryingMessageListenerTests.this.channel, never()).basicAck(anyLong(), eq(false));
		}

		@Test
		void processedMessagesAreAckedOneByOneWhenAnEarlierMessageOfTheirChannelWaitsLongerForItsForward()
				throws Exception {
			RetryingMessageListenerTests.this.ackDeferral = Duration.ofMillis(20);
			RetryingBatchMessageListener wrapper = failingFirstBatch();

			wrapper.onMessageBatch(batch(2), RetryingMessageListenerTests.this.channel);
			wrapper.onMessageBatch(List.of(message(3, 0, null), message(4, 0, null)),
					RetryingMessageListenerTests.this.channel);

			// Not confirmed within the deferral: the prefetch must not stay full.
			for (long tag : List.of(2L, 3L, 4L)) {
				verify(RetryingMessageListenerTests.this.channel, timeout(5000)).basicAck(tag, false);
			}
			verify(RetryingMessageListenerTests.this.channel, never()).basicAck(anyLong(), eq(true));
			RetryingMessageListenerTests.this.confirm.complete(null);
			verify(RetryingMessageListenerTests.this.channel, timeout(5000)).basicAck(1, false);
		}

		private RetryingBatchMessageListener failingFirstBatch() {
			return batchWrapper((messages) -> {
				if (this.calls.size() == 1) {
					throw new BatchListenerFailedException("first failed", new IllegalStateException("down"), 0);
				}
			}, policy(3));
		}

		@Test
		void severalNamedFailuresAreEachRetriedOrParkedOnTheirOwnAndTheOthersAcked() throws Exception {
			List<Message> batch = List.of(message(1, 0, null), retried(2, 3, NOW.minusSeconds(70), NOW),
					message(3, 0, null), message(4, 0, null));
			RetryingBatchMessageListener wrapper = batchWrapper((messages) -> {
				throw new BatchListenerFailedException("two failed", Map.of(0, new IllegalStateException("first down"),
						1, new IllegalStateException("second down"), 3, new IllegalArgumentException("bad order")));
			}, policy(3, 0, List.of(IllegalArgumentException.class)));

			wrapper.onMessageBatch(batch, RetryingMessageListenerTests.this.channel);

			// Processed, its ack waits for the earlier ones' forwards.
			assertThat(ackedTags()).isEmpty();
			RetryingMessageListenerTests.this.confirm.complete(null);
			verifyAcked(3);
			ArgumentCaptor<AMQP.BasicProperties> toTier = ArgumentCaptor.forClass(AMQP.BasicProperties.class);
			verify(RetryingMessageListenerTests.this.forwarder).toTier(eq(QUEUE), toTier.capture(), eq(BODY));
			assertThat(toTier.getValue().getMessageId()).isEqualTo("m-1");
			assertThat(toTier.getValue().getHeaders()).containsEntry(RetryHeaders.COUNT, 1L)
				.containsEntry(RetryHeaders.ERROR, "first down");
			ArgumentCaptor<AMQP.BasicProperties> parked = ArgumentCaptor.forClass(AMQP.BasicProperties.class);
			verify(RetryingMessageListenerTests.this.forwarder, times(2)).toParkingLot(parked.capture(), eq(BODY));
			assertThat(parked.getAllValues()).satisfiesExactlyInAnyOrder((exhausted) -> {
				assertThat(exhausted.getMessageId()).isEqualTo("m-2");
				assertThat(exhausted.getHeaders()).containsEntry(RetryHeaders.PARKED_REASON, "exhausted")
					.containsEntry(RetryHeaders.COUNT, 3L)
					.containsEntry(RetryHeaders.ERROR, "second down");
			}, (notRetryable) -> {
				assertThat(notRetryable.getMessageId()).isEqualTo("m-4");
				assertThat(notRetryable.getHeaders()).containsEntry(RetryHeaders.PARKED_REASON, "not-retryable");
			});
			assertThat(this.calls).hasSize(1);
		}

		@Test
		void anyOtherFailureFailsEveryMessageOfTheBatch() throws Exception {
			RetryingBatchMessageListener wrapper = batchWrapper((messages) -> {
				throw new IllegalStateException("database down");
			}, policy(3));

			wrapper.onMessageBatch(batch(3), RetryingMessageListenerTests.this.channel);

			verify(RetryingMessageListenerTests.this.forwarder, times(3)).toTier(eq(QUEUE),
					any(AMQP.BasicProperties.class), eq(BODY));
			verify(RetryingMessageListenerTests.this.channel, never()).basicAck(anyLong(), anyBoolean());
		}

		@Test
		void namedIndexOutsideTheBatchFailsEveryMessage() throws Exception {
			RetryingBatchMessageListener wrapper = batchWrapper((messages) -> {
				throw new BatchListenerFailedException("wrong index", new IllegalStateException("down"), 7);
			}, policy(3));

			wrapper.onMessageBatch(batch(2), RetryingMessageListenerTests.this.channel);

			verify(RetryingMessageListenerTests.this.forwarder, times(2)).toTier(eq(QUEUE),
					any(AMQP.BasicProperties.class), eq(BODY));
		}

		@Test
		void immediateRetriesCallTheListenerAgainWithTheFailedMessagesOnly() throws Exception {
			List<Message> batch = batch(3);
			RetryingBatchMessageListener wrapper = batchWrapper((messages) -> {
				if (this.calls.size() == 1) {
					throw new BatchListenerFailedException("one failed", Map.of(1, new IllegalStateException("blip")));
				}
			}, policy(3, 1, List.of()));

			wrapper.onMessageBatch(batch, RetryingMessageListenerTests.this.channel);

			assertThat(this.calls).extracting(List::size).containsExactly(3, 1);
			assertThat(this.calls.get(1)).containsExactly(batch.get(1));
			verifyNothingForwarded();
			for (long tag : List.of(1L, 2L, 3L)) {
				verifyAcked(tag);
			}
		}

		@Test
		void messageTheAdapterCouldNotConvertIsParkedInsteadOfDroppedByItsReject() throws Exception {
			List<Message> batch = batch(2);
			RetryingBatchMessageListener wrapper = new RetryingBatchMessageListener(
					(ChannelAwareBatchMessageListener) (messages, adapterChannel) -> {
						try {
							adapterChannel.basicReject(2, false);
						}
						catch (java.io.IOException ex) {
							throw new IllegalStateException(ex);
						}
						this.calls.add(messages);
					}, outcomes(policy(3), RetryingMessageListenerTests.this.gate, onTheTiers(policy(3))),
					RetryingMessageListenerTests.this.channels(), null);

			wrapper.onMessageBatch(batch, RetryingMessageListenerTests.this.channel);

			verify(RetryingMessageListenerTests.this.channel, never()).basicReject(anyLong(), anyBoolean());
			verifyAcked(1);
			assertThat(forwardedToParkingLot().getHeaders()).containsEntry(RetryHeaders.PARKED_REASON, "not-retryable")
				.containsEntry(RetryHeaders.EXCEPTION, MessageConversionException.class.getName());
		}

		@Test
		void onTheBrokerBackendEachFailedMessageGoesBackToItsQueueWithARejectForItsRetry() throws Exception {
			EffectiveRetryPolicy linear = linearPolicy(3);
			RetryingBatchMessageListener wrapper = batchWrapper((messages) -> {
				throw new BatchListenerFailedException("one failed", Map.of(1, new IllegalStateException("down")));
			}, onTheBroker(linear), linear);

			wrapper.onMessageBatch(batch(3), RetryingMessageListenerTests.this.channel);

			verify(RetryingMessageListenerTests.this.channel).basicReject(2, true);
			verifyAcked(1);
			verifyAcked(3);
			verifyNothingForwarded();
		}

		@Test
		void messageOfABatchListenerOutsideAConsumerBatchIsABatchOfOne() throws Exception {
			Message message = message(9, 0, null);
			RetryingBatchMessageListener wrapper = batchWrapper((messages) -> {
			}, policy(3));

			wrapper.onMessage(message, RetryingMessageListenerTests.this.channel);

			assertThat(this.calls).singleElement().satisfies((call) -> assertThat(call).containsExactly(message));
			verifyAcked(9);
		}

		@Test
		void asynchronousBatchListenerWhoseResultNamesAFailureHasItRetriedAndTheOthersAckedOnAListenerThread()
				throws Exception {
			InvocationCapture invocations = new InvocationCapture();
			CompletableFuture<Void> result = new CompletableFuture<>();
			RetryingBatchMessageListener wrapper = new RetryingBatchMessageListener(
					(BatchMessageListener) (messages) -> {
						this.calls.add(List.copyOf(messages));
						invocations.captured(messages, result);
					}, outcomes(policy(3), RetryingMessageListenerTests.this.gate, onTheTiers(policy(3))),
					RetryingMessageListenerTests.this.channels(), invocations);

			wrapper.onMessageBatch(batch(3), RetryingMessageListenerTests.this.channel);
			verify(RetryingMessageListenerTests.this.channel, never()).basicAck(anyLong(), anyBoolean());
			result.completeExceptionally(
					new BatchListenerFailedException("one failed", Map.of(2, new IllegalStateException("third down"))));

			verifyAcked(1);
			verifyAcked(2);
			ArgumentCaptor<AMQP.BasicProperties> forwarded = ArgumentCaptor.forClass(AMQP.BasicProperties.class);
			verify(RetryingMessageListenerTests.this.forwarder, timeout(5000)).toTier(eq(QUEUE), forwarded.capture(),
					eq(BODY));
			assertThat(forwarded.getValue().getMessageId()).isEqualTo("m-3");
			assertThat(this.calls).hasSize(1);
		}

		private RetryingBatchMessageListener batchWrapper(java.util.function.Consumer<List<Message>> listener,
				EffectiveRetryPolicy policy) {
			return batchWrapper(listener, onTheTiers(policy), policy);
		}

		private RetryingBatchMessageListener batchWrapper(java.util.function.Consumer<List<Message>> listener,
				ListenerBackend backend, EffectiveRetryPolicy policy) {
			BatchMessageListener delegate = (messages) -> {
				this.calls.add(List.copyOf(messages));
				listener.accept(messages);
			};
			return new RetryingBatchMessageListener(delegate,
					outcomes(policy, RetryingMessageListenerTests.this.gate, backend),
					RetryingMessageListenerTests.this.channels(), null);
		}

		private List<Message> batch(int size) {
			List<Message> batch = new ArrayList<>();
			for (int tag = 1; tag <= size; tag++) {
				batch.add(message(tag, 0, null));
			}
			return batch;
		}

	}

	/**
	 * An asynchronous listener: its result's completion is its attempt's outcome, handled
	 * on the starter's listener threads.
	 */
	@Nested
	class AsynchronousListeners {

		private final InvocationCapture invocations = new InvocationCapture();

		private final List<String> ackThreads = new CopyOnWriteArrayList<>();

		@BeforeEach
		void recordTheThreadsThatAck() throws Exception {
			willAnswer((invocation) -> this.ackThreads.add(Thread.currentThread().getName()))
				.given(RetryingMessageListenerTests.this.channel)
				.basicAck(anyLong(), anyBoolean());
		}

		@Test
		void futureThatSucceedsIsAckedByAListenerThreadNotTheThreadThatCompletedIt() throws Exception {
			CompletableFuture<Void> result = new CompletableFuture<>();
			RetryingMessageListener wrapper = asyncWrapper((message) -> result, policy(3));

			wrapper.onMessage(message(1, 0, null), RetryingMessageListenerTests.this.channel);
			verify(RetryingMessageListenerTests.this.channel, never()).basicAck(anyLong(), anyBoolean());
			Thread completing = new Thread(() -> result.complete(null), "netty-event-loop");
			completing.start();
			completing.join();

			verify(RetryingMessageListenerTests.this.channel, timeout(5000)).basicAck(1, false);
			assertThat(this.ackThreads).singleElement().asString().startsWith("tiered-retry-listener-");
		}

		@Test
		void futureThatFailsIsRetriedAndItsOriginalAckedOnlyOnceTheForwardIsConfirmed() throws Exception {
			CompletableFuture<Void> result = new CompletableFuture<>();
			RetryingMessageListener wrapper = asyncWrapper((message) -> result, policy(3));

			wrapper.onMessage(message(2, 0, null), RetryingMessageListenerTests.this.channel);
			result.completeExceptionally(new IllegalStateException("downstream 503"));

			ArgumentCaptor<AMQP.BasicProperties> forwarded = ArgumentCaptor.forClass(AMQP.BasicProperties.class);
			verify(RetryingMessageListenerTests.this.forwarder, timeout(5000)).toTier(eq(QUEUE), forwarded.capture(),
					eq(BODY));
			assertThat(forwarded.getValue().getHeaders()).containsEntry(RetryHeaders.COUNT, 1L)
				.containsEntry(RetryHeaders.EXCEPTION, IllegalStateException.class.getName())
				.containsEntry(RetryHeaders.ERROR, "downstream 503");
			verify(RetryingMessageListenerTests.this.channel, never()).basicAck(anyLong(), anyBoolean());
			RetryingMessageListenerTests.this.confirm.complete(null);
			verify(RetryingMessageListenerTests.this.channel, timeout(5000)).basicAck(2, false);
		}

		@Test
		void futureThatDoesNotCompleteWithinTheAttemptTimeoutIsCancelledAndRetried() throws Exception {
			RetryingMessageListenerTests.this.asyncAttemptTimeout = Duration.ofMillis(200);
			CompletableFuture<Void> result = new CompletableFuture<>();
			RetryingMessageListener wrapper = asyncWrapper((message) -> result, policy(3));

			wrapper.onMessage(message(3, 0, null), RetryingMessageListenerTests.this.channel);

			ArgumentCaptor<AMQP.BasicProperties> forwarded = ArgumentCaptor.forClass(AMQP.BasicProperties.class);
			verify(RetryingMessageListenerTests.this.forwarder, timeout(5000)).toTier(eq(QUEUE), forwarded.capture(),
					eq(BODY));
			assertThat(result).isCancelled();
			assertThat(forwarded.getValue().getHeaders()).containsEntry(RetryHeaders.EXCEPTION,
					AsyncAttemptTimeoutException.class.getName());
		}

		@Test
		void immediateRetriesOfAnAsynchronousListenerCallItAgainOnceItsResultFailed() throws Exception {
			AtomicInteger calls = new AtomicInteger();
			RetryingMessageListener wrapper = asyncWrapper((message) -> (calls.incrementAndGet() < 3)
					? CompletableFuture.failedFuture(new IllegalStateException("blip"))
					: CompletableFuture.completedFuture(null), policy(3, 2, List.of()));

			wrapper.onMessage(message(4, 0, null), RetryingMessageListenerTests.this.channel);

			verify(RetryingMessageListenerTests.this.channel, timeout(5000)).basicAck(4, false);
			assertThat(calls).hasValue(3);
			verifyNothingForwarded();
		}

		@Test
		void listenerThatThrowsBeforeReturningItsResultFailsLikeASynchronousOne() throws Exception {
			RetryingMessageListener wrapper = asyncWrapper((message) -> {
				throw new IllegalStateException("could not even start");
			}, policy(3));

			wrapper.onMessage(message(5, 0, null), RetryingMessageListenerTests.this.channel);

			assertThat(forwardedToTier().getHeaders()).containsEntry(RetryHeaders.ERROR, "could not even start");
		}

		@Test
		void probeOfAnAsynchronousListenerWaitsForItsOutcomeAndAFailedOneIsHeldForTheNextProbe() throws Exception {
			RecordingGate probing = new RecordingGate(ListenerGate.Passage.PROBE);
			AtomicInteger calls = new AtomicInteger();
			RetryingMessageListener wrapper = new RetryingMessageListener((MessageListener) (message) -> {
				int call = calls.incrementAndGet();
				this.invocations.captured(message,
						(call == 1) ? CompletableFuture.failedFuture(new IllegalStateException("still down"))
								: CompletableFuture.completedFuture(null));
			}, outcomes(policy(3), probing, onTheTiers(policy(3))), RetryingMessageListenerTests.this.channels(),
					this.invocations);

			wrapper.onMessage(message(6, 0, null), RetryingMessageListenerTests.this.channel);

			assertThat(probing.outcomes).containsExactly("failed", "succeeded");
			assertThat(this.ackThreads).singleElement().asString().isEqualTo(Thread.currentThread().getName());
			verifyNothingForwarded();
		}

		private RetryingMessageListener asyncWrapper(java.util.function.Function<Message, Object> listener,
				EffectiveRetryPolicy policy) {
			MessageListener delegate = (message) -> this.invocations.captured(message, listener.apply(message));
			return new RetryingMessageListener(delegate,
					outcomes(policy, RetryingMessageListenerTests.this.gate, onTheTiers(policy)),
					RetryingMessageListenerTests.this.channels(), this.invocations);
		}

	}

	// Acked on its own, or by a multiple ack up to a later tag.
	private void verifyAcked(long deliveryTag) {
		await().atMost(Duration.ofSeconds(5)).until(() -> ackedTags().contains(deliveryTag));
	}

	private java.util.Set<Long> ackedTags() {
		java.util.Set<Long> acked = new java.util.HashSet<>();
		for (org.mockito.invocation.Invocation invocation : org.mockito.Mockito.mockingDetails(this.channel)
			.getInvocations()) {
			if (invocation.getMethod().getName().equals("basicAck")) {
				long tag = invocation.getArgument(0);
				boolean multiple = invocation.getArgument(1);
				for (long covered = multiple ? 1 : tag; covered <= tag; covered++) {
					acked.add(covered);
				}
			}
		}
		return acked;
	}

	private RetryingMessageListener wrapper(MessageListener delegate, EffectiveRetryPolicy policy) {
		return wrapper(delegate, policy, this.gate);
	}

	private RetryingMessageListener wrapper(MessageListener delegate, EffectiveRetryPolicy policy, ListenerGate gate) {
		return wrapper(delegate, policy, gate, onTheTiers(policy));
	}

	private RetryingMessageListener onTheBroker(MessageListener delegate, EffectiveRetryPolicy policy) {
		return wrapper(delegate, policy, this.gate, onTheBroker(policy));
	}

	private static ListenerBackend onTheBroker(EffectiveRetryPolicy policy) {
		Map<String, Object> arguments = new LinkedHashMap<>(BrokerDelayedRetry.producing(policy).queueArguments());
		arguments.put("x-queue-type", "quorum");
		ListenerBackend broker = new ListenerBackend("OrderListener#onOrder", Backend.BROKER, policy,
				List.of(new BackendChoice.QueueFacts(QUEUE, arguments)));
		assertThat(broker.choose("4.3.6").backend()).isEqualTo(Backend.BROKER);
		return broker;
	}

	private RetryingMessageListener wrapper(MessageListener delegate, EffectiveRetryPolicy policy, ListenerGate gate,
			ListenerBackend backend) {
		return new RetryingMessageListener(delegate, outcomes(policy, gate, backend),
				RetryingMessageListenerTests.this.channels(), null);
	}

	/**
	 * How long processed deliveries wait for an earlier one to be acked with it: longer
	 * than any test, unless a test says otherwise.
	 */
	Duration ackDeferral = Duration.ofMinutes(1);

	ConsumerChannels channels() {
		return new ConsumerChannels(org.mockito.Mockito.mock(org.springframework.context.Lifecycle.class),
				new HeldMessages(this.executors), Duration.ofSeconds(5), this.ackDeferral);
	}

	private DeliveryOutcomes outcomes(EffectiveRetryPolicy policy, ListenerGate gate, ListenerBackend backend) {
		RetryEventPublisher eventPublisher = new RetryEventPublisher(this.events::add, Runnable::run);
		ListenerRuntime runtime = new ListenerRuntime(this.capture,
				new AsyncAttempts(this.executors, this.asyncAttemptTimeout, RetryObservations.DISABLED),
				this.classifiers, this.retryAfterResolvers, new FailureHeaderSettings(false, 500, 4000), PARKING_LOT,
				Clock.fixed(NOW, ZoneOffset.UTC));
		ForwardSenders senders = new ForwardSenders(this.forwarder, this.executors, eventPublisher, this.failurePause,
				this.failurePause, RetryObservations.DISABLED);
		RetryNotifications notifications = senders.notificationsFor("OrderListener#onOrder", policy.maxRetries());
		ForwardSender sender = senders.senderFor(notifications, 10);
		RetryableListenerInfo info = new RetryableListenerInfo("OrderListener#onOrder", "orders-listener",
				List.of(QUEUE), "", policy, Object.class, null);
		return new DeliveryOutcomes(info, new RetryDecider(TIERS, policy), runtime, sender, notifications, gate,
				backend);
	}

	private ListenerBackend onTheTiers(EffectiveRetryPolicy policy) {
		ListenerBackend tiers = new ListenerBackend("OrderListener#onOrder", Backend.TIERS, policy, List.of());
		tiers.choose("3.10.8");
		return tiers;
	}

	private static EffectiveRetryPolicy policy(int maxRetries) {
		return policy(maxRetries, 0, List.of());
	}

	private static EffectiveRetryPolicy policy(int maxRetries, int immediateRetries,
			List<Class<? extends Throwable>> noRetryOn) {
		return new EffectiveRetryPolicy(maxRetries,
				List.of(Duration.ofSeconds(1), Duration.ofSeconds(10), Duration.ofMinutes(1)), Duration.ofSeconds(1),
				2.0, Duration.ofMinutes(1), immediateRetries, null, List.of(), noRetryOn);
	}

	private static EffectiveRetryPolicy linearPolicy(int maxRetries) {
		return new EffectiveRetryPolicy(maxRetries,
				List.of(Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(3)), Duration.ofSeconds(1),
				2.0, Duration.ofMinutes(1), 0, null, List.of(), List.of());
	}

	private static MessageListener failing(RuntimeException failure) {
		return (message) -> {
			throw failure;
		};
	}

	/**
	 * A delivery from the work queue, as the container hands it over (nothing captured).
	 */
	private static Message message(long deliveryTag, long retries, @Nullable Instant due) {
		MessageProperties properties = new MessageProperties();
		properties.setConsumerQueue(QUEUE);
		properties.setDeliveryTag(deliveryTag);
		properties.setMessageId("m-" + deliveryTag);
		properties.setRetryCount(retries);
		if (due != null) {
			properties.setHeader(RetryHeaders.DUE, due.toEpochMilli());
		}
		return new Message(BODY, properties);
	}

	/**
	 * A delivery that came back from a tier: its retry headers were written for this
	 * queue.
	 */
	private static Message retried(long deliveryTag, long retries, Instant firstFailure, Instant due) {
		Message message = message(deliveryTag, retries, due);
		MessageProperties properties = message.getMessageProperties();
		properties.setHeader(RetryHeaders.QUEUE, QUEUE);
		properties.setHeader(RetryHeaders.FIRST_FAILURE, firstFailure.toEpochMilli());
		properties.setHeader(RetryHeaders.TIER, "1m");
		return message;
	}

	private AMQP.BasicProperties forwardedToTier() {
		ArgumentCaptor<AMQP.BasicProperties> properties = ArgumentCaptor.forClass(AMQP.BasicProperties.class);
		verify(this.forwarder).toTier(eq(QUEUE), properties.capture(), eq(BODY));
		verify(this.forwarder, never()).toParkingLot(any(AMQP.BasicProperties.class), any(byte[].class));
		return properties.getValue();
	}

	private AMQP.BasicProperties forwardedToParkingLot() {
		ArgumentCaptor<AMQP.BasicProperties> properties = ArgumentCaptor.forClass(AMQP.BasicProperties.class);
		verify(this.forwarder).toParkingLot(properties.capture(), eq(BODY));
		verify(this.forwarder, never()).toTier(anyString(), any(AMQP.BasicProperties.class), any(byte[].class));
		return properties.getValue();
	}

	private void verifyNothingForwarded() {
		verify(this.forwarder, never()).toTier(anyString(), any(AMQP.BasicProperties.class), any(byte[].class));
		verify(this.forwarder, never()).toParkingLot(any(AMQP.BasicProperties.class), any(byte[].class));
	}

	/**
	 * A gate that lets every message pass the same way and records the outcomes it is
	 * told.
	 */
	static final class RecordingGate implements ListenerGate {

		final List<String> outcomes = new CopyOnWriteArrayList<>();

		volatile boolean paused;

		volatile int passages;

		private final Passage passage;

		RecordingGate(Passage passage) {
			this.passage = passage;
		}

		@Override
		public boolean isPaused() {
			return this.paused;
		}

		@Override
		public Passage awaitPassage() {
			this.passages++;
			return this.passage;
		}

		@Override
		public void succeeded(Duration took) {
			this.outcomes.add("succeeded");
		}

		@Override
		public void failed(Duration took, Throwable failure) {
			this.outcomes.add("failed");
		}

		@Override
		public void ignored() {
			this.outcomes.add("ignored");
		}

	}

}
