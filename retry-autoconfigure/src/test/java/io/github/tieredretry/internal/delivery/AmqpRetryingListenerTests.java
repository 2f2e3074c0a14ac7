package io.github.tieredretry.internal.delivery;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.amqp.Consumer;
import io.github.tieredretry.annotation.Backend;
import io.github.tieredretry.event.MessageRecoveredEvent;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.event.RetryEventPublisher;
import io.github.tieredretry.internal.forwarding.MessageForwarder;
import io.github.tieredretry.internal.forwarding.RetryExecutors;
import io.github.tieredretry.internal.headers.FailureHeaderSettings;
import io.github.tieredretry.internal.policy.BrokerDelayedRetry;
import io.github.tieredretry.internal.policy.RetryDecider;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.internal.settlement.ForwardSender;
import io.github.tieredretry.internal.settlement.ForwardSenders;
import io.github.tieredretry.internal.settlement.RetryNotifications;
import io.github.tieredretry.listener.ListenerBackend;
import io.github.tieredretry.listener.RetryableListenerInfo;
import io.github.tieredretry.observation.RetryObservations;
import io.github.tieredretry.policy.BackendChoice;
import io.github.tieredretry.policy.EffectiveRetryPolicy;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mockito.ArgumentCaptor;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbitmq.client.listener.RabbitAmqpMessageListener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.BDDMockito.given;
import static org.mockito.BDDMockito.willAnswer;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.timeout;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.verifyNoInteractions;

/**
 * Tests for {@link AmqpRetryingListener} with its real {@link ForwardSender} and
 * {@link RetryNotifications}, a fake forwarder whose confirms the test completes, and
 * mock AMQP 1.0 messages and contexts: no broker.
 */
class AmqpRetryingListenerTests {

	private static final Instant NOW = Instant.parse("2026-03-01T10:00:00Z");

	private static final String QUEUE = "orders";

	private static final TierLadder TIERS = TierLadder
		.of(List.of(Duration.ofSeconds(1), Duration.ofSeconds(10), Duration.ofMinutes(1)));

	private static final EffectiveRetryPolicy POLICY = new EffectiveRetryPolicy(3,
			List.of(Duration.ofSeconds(1), Duration.ofSeconds(10), Duration.ofMinutes(1)), Duration.ofSeconds(1), 2.0,
			Duration.ofMinutes(1), 0, null, List.of(), List.of());

	// Delays that a quorum queue's delayed retry produces exactly.
	private static final EffectiveRetryPolicy LINEAR_POLICY = new EffectiveRetryPolicy(3,
			List.of(Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(3)), Duration.ofSeconds(1), 2.0,
			Duration.ofMinutes(1), 0, null, List.of(), List.of());

	private static final byte[] BODY = "{\"order\":42}".getBytes();

	private final RetryExecutors executors = new RetryExecutors();

	private final MessageForwarder forwarder = mock(MessageForwarder.class);

	private final CompletableFuture<Void> confirm = new CompletableFuture<>();

	private final Consumer.Context context = mock(Consumer.Context.class);

	private final List<Object> events = new CopyOnWriteArrayList<>();

	@BeforeEach
	void forwardsWaitForTheTestsConfirm() {
		given(this.forwarder.toTier(anyString(), any(AMQP.BasicProperties.class), any(byte[].class)))
			.willReturn(this.confirm);
		given(this.forwarder.toParkingLot(any(AMQP.BasicProperties.class), any(byte[].class))).willReturn(this.confirm);
	}

	@AfterEach
	void closeExecutors() {
		this.executors.close(Duration.ofSeconds(1));
	}

	@Test
	void processedFirstDeliveryIsAcceptedWithoutConvertingItsProperties() {
		com.rabbitmq.client.amqp.Message message = message(Map.of("tenant", "acme"));

		listener(new Listener(null), onTheTiers()).onAmqpMessage(message, this.context);

		verify(this.context).accept();
		// Reading any of these is the conversion the happy path does without.
		verify(message, never()).messageId();
		verify(message, never()).contentType();
		verify(message, never()).durable();
		verify(message, never()).body();
		verifyNoInteractions(this.forwarder);
		assertThat(this.events).isEmpty();
	}

	@Test
	void failedFirstDeliveryIsForwardedWithAllItsProperties() {
		com.rabbitmq.client.amqp.Message message = message(Map.of("tenant", "acme"));
		given(message.messageId()).willReturn("m-1");

		listener(new Listener(new IllegalStateException("down")), onTheTiers()).onAmqpMessage(message, this.context);

		ArgumentCaptor<AMQP.BasicProperties> forwarded = ArgumentCaptor.forClass(AMQP.BasicProperties.class);
		// Through the tiers' exchange, by the consumer queue's name.
		verify(this.forwarder).toTier(eq(QUEUE), forwarded.capture(), eq(BODY));
		assertThat(forwarded.getValue().getMessageId()).isEqualTo("m-1");
		assertThat(forwarded.getValue().getHeaders()).containsEntry("tenant", "acme")
			.containsEntry(RetryHeaders.QUEUE, QUEUE)
			.containsEntry(RetryHeaders.COUNT, 1L)
			.containsEntry(RetryHeaders.TIER, "1s");
		verify(this.context, never()).accept();
		this.confirm.complete(null);
		verify(this.context, timeout(5000)).accept();
	}

	@Test
	void retryFromATierThatIsProcessedIsReportedAsRecovered() {
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put(RetryHeaders.QUEUE, QUEUE);
		properties.put(RetryHeaders.COUNT, 2L);
		properties.put(RetryHeaders.FIRST_FAILURE, NOW.minusSeconds(11).toEpochMilli());
		properties.put(RetryHeaders.DUE, NOW.minusMillis(1).toEpochMilli());

		listener(new Listener(null), onTheTiers()).onAmqpMessage(message(properties), this.context);

		verify(this.context).accept();
		await().atMost(Duration.ofSeconds(5)).until(() -> !this.events.isEmpty());
		assertThat(this.events).singleElement().isInstanceOfSatisfying(MessageRecoveredEvent.class, (event) -> {
			assertThat(event.retryCount()).isEqualTo(2);
			assertThat(event.recoveryTime()).isEqualTo(Duration.ofSeconds(11));
		});
	}

	@Test
	void retryTheBrokerHeldThatFailsAgainGoesBackToItsQueueWithItsNextRetry() {
		com.rabbitmq.client.amqp.Message message = message(Map.of());
		given(message.annotation(AmqpRetryingListener.RETRY_COUNT)).willReturn(1L);
		given(message.annotation(AmqpRetryingListener.FIRST_FAILURE)).willReturn(NOW.minusSeconds(1).toEpochMilli());

		listener(new Listener(new IllegalStateException("down")), LINEAR_POLICY, onTheBroker()).onAmqpMessage(message,
				this.context);

		@SuppressWarnings("unchecked")
		ArgumentCaptor<Map<String, Object>> annotations = ArgumentCaptor.forClass(Map.class);
		verify(this.context, timeout(5000)).requeue(annotations.capture());
		assertThat(annotations.getValue()).containsEntry(AmqpRetryingListener.RETRY_COUNT, 2L)
			.containsEntry(AmqpRetryingListener.FIRST_FAILURE, NOW.minusSeconds(1).toEpochMilli());
		// The listener was shown the retry count the annotation holds.
		verify(message).property(org.springframework.amqp.core.MessageProperties.RETRY_COUNT, 1L);
		verifyNoInteractions(this.forwarder);
	}

	// A received message with these application properties and no annotations.
	@SuppressWarnings("unchecked")
	private static com.rabbitmq.client.amqp.Message message(Map<String, Object> properties) {
		com.rabbitmq.client.amqp.Message message = mock(com.rabbitmq.client.amqp.Message.class);
		given(message.body()).willReturn(BODY);
		given(message.durable()).willReturn(true);
		willAnswer((invocation) -> {
			properties.forEach(invocation.<BiConsumer<String, Object>>getArgument(0));
			return message;
		}).given(message).forEachProperty(any(BiConsumer.class));
		return message;
	}

	private AmqpRetryingListener listener(RabbitAmqpMessageListener delegate, ListenerBackend backend) {
		return listener(delegate, POLICY, backend);
	}

	private AmqpRetryingListener listener(RabbitAmqpMessageListener delegate, EffectiveRetryPolicy policy,
			ListenerBackend backend) {
		RetryEventPublisher eventPublisher = new RetryEventPublisher(this.events::add, Runnable::run);
		ListenerRuntime runtime = new ListenerRuntime(new DeliveryCapture(),
				new AsyncAttempts(this.executors, Duration.ofSeconds(5), RetryObservations.DISABLED), List.of(),
				List.of(), new FailureHeaderSettings(false, 500, 4000), "retry.parking-lot",
				Clock.fixed(NOW, ZoneOffset.UTC));
		ForwardSenders senders = new ForwardSenders(this.forwarder, this.executors, eventPublisher, Duration.ZERO,
				Duration.ZERO, RetryObservations.DISABLED);
		RetryNotifications notifications = senders.notificationsFor("OrderListener#onOrder", policy.maxRetries());
		RetryableListenerInfo info = new RetryableListenerInfo("OrderListener#onOrder", "orders-listener",
				List.of(QUEUE), "", policy, Object.class, null);
		return new AmqpRetryingListener(delegate, info, QUEUE, new RetryDecider(TIERS, policy), runtime, notifications,
				backend, senders.senderFor(notifications, 10));
	}

	private static ListenerBackend onTheTiers() {
		ListenerBackend tiers = new ListenerBackend("OrderListener#onOrder", Backend.TIERS, POLICY, List.of());
		tiers.choose("4.3.6");
		return tiers;
	}

	private static ListenerBackend onTheBroker() {
		Map<String, Object> arguments = new LinkedHashMap<>(
				BrokerDelayedRetry.producing(LINEAR_POLICY).queueArguments());
		arguments.put("x-queue-type", "quorum");
		ListenerBackend broker = new ListenerBackend("OrderListener#onOrder", Backend.BROKER, LINEAR_POLICY,
				List.of(new BackendChoice.QueueFacts(QUEUE, arguments)));
		assertThat(broker.choose("4.3.6").backend()).isEqualTo(Backend.BROKER);
		return broker;
	}

	/**
	 * An application's AMQP 1.0 listener that throws the given failure, or returns.
	 */
	private record Listener(@Nullable RuntimeException failure) implements RabbitAmqpMessageListener {

		@Override
		public void onAmqpMessage(com.rabbitmq.client.amqp.Message message, Consumer.@Nullable Context context) {
			if (this.failure != null) {
				throw this.failure;
			}
		}

		@Override
		public void onMessage(Message message) {
			throw new UnsupportedOperationException();
		}

	}

}
