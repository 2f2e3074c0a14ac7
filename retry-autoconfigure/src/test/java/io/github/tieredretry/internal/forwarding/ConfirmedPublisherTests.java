package io.github.tieredretry.internal.forwarding;

import java.io.IOException;
import java.net.ConnectException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.AlreadyClosedException;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmListener;
import com.rabbitmq.client.ReturnListener;
import com.rabbitmq.client.ShutdownListener;
import com.rabbitmq.client.ShutdownSignalException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.amqp.AmqpConnectException;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ChannelProxy;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.connection.RabbitUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyBoolean;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.BDDMockito.given;
import static org.mockito.BDDMockito.willAnswer;
import static org.mockito.BDDMockito.willThrow;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;

/**
 * Tests for {@link ConfirmedPublisher} without a broker: every channel is a fake whose
 * confirms, returns and closes the test sends itself. The top-level tests are of
 * publishes on a channel of their own (a delayed send reaching the application's
 * exchange, a publish its caller waits for), and of what holds for every publish;
 * {@link Forwards} are of forwards sharing a channel.
 */
class ConfirmedPublisherTests {

	private static final AMQP.BasicProperties PROPERTIES = new AMQP.BasicProperties.Builder().messageId("m-1")
		.deliveryMode(2)
		.build();

	private static final byte[] BODY = "order 42".getBytes();

	private final RetryExecutors executors = new RetryExecutors();

	private final PublisherBlockedState blockedState = new PublisherBlockedState(Clock.systemUTC(), (event) -> {
	});

	private final FakeChannels channels = new FakeChannels();

	private final ConnectionFactory factory = this.channels.factory();

	@AfterEach
	void closeExecutors() {
		this.executors.close(Duration.ZERO);
	}

	@Test
	void brokerAckCompletesThePublishAndGivesItsChannelBackToTheCache() throws Exception {
		CompletableFuture<Void> result = publish("retry.delay", "orders");
		FakeChannel channel = this.channels.awaitPublish(0);
		assertThat(result).isNotDone();
		channel.ack();

		assertThat(result).succeedsWithin(Duration.ofSeconds(5));
		verify(channel.real).basicPublish(eq("retry.delay"), eq("orders"), eq(true), any(AMQP.BasicProperties.class),
				eq(BODY));
		assertThat(channel.awaitClose()).as("closed for good").isFalse();
		verify(channel.real).removeConfirmListener(channel.confirms());
		verify(channel.real).removeReturnListener(channel.returns());
		verify(channel.real).removeShutdownListener(channel.shutdowns());
	}

	@Test
	void confirmsOfOtherPublishesOnTheChannelSettleNothing() throws Exception {
		this.channels.nextSequenceNumber = 7;
		CompletableFuture<Void> result = publish("", "orders");
		FakeChannel channel = this.channels.awaitPublish(0);
		channel.confirms().handleAck(6, false);
		channel.confirms().handleAck(6, true);
		channel.confirms().handleNack(5, true);
		assertThat(result).isNotDone();
		channel.confirms().handleAck(9, true);

		assertThat(result).succeedsWithin(Duration.ofSeconds(5));
	}

	@Test
	void brokerNackFailsThePublishAsNackedAndItsChannelIsNeverReused() throws Exception {
		CompletableFuture<Void> result = publish("", "orders");
		FakeChannel channel = this.channels.awaitPublish(0);
		channel.nack();

		assertThat(failureOf(result).getKind()).isEqualTo(ForwardFailedException.Kind.NACKED);
		assertThat(channel.awaitClose()).as("closed for good").isTrue();
	}

	@Test
	void returnedPublishFailsAsReturnedWhenItsConfirmArrives() throws Exception {
		CompletableFuture<Void> result = publish("", "no-such-queue");
		FakeChannel channel = this.channels.awaitPublish(0);
		channel.returns().handleReturn(312, "NO_ROUTE", "", "no-such-queue", PROPERTIES, BODY);
		assertThat(result).as("settled by the confirm that follows the return").isNotDone();
		channel.ack();

		ForwardFailedException failure = failureOf(result);
		assertThat(failure.getKind()).isEqualTo(ForwardFailedException.Kind.RETURNED);
		assertThat(failure).hasMessageContaining("312 NO_ROUTE").hasMessageContaining("'no-such-queue'");
		assertThat(channel.awaitClose()).as("a returned publish is confirmed: its channel is reusable").isFalse();
	}

	@Test
	void publishWithoutConfirmTimesOutOnTheTimerAndItsChannelIsClosedForGood() throws Exception {
		ConfirmedPublisher publisher = publisher(this.factory, Duration.ofMillis(200));

		CompletableFuture<Void> result = publisher.publishAsSent("", "orders", PROPERTIES, BODY);
		FakeChannel channel = this.channels.awaitPublish(0);

		ForwardFailedException failure = failureOf(result);
		assertThat(failure.getKind()).isEqualTo(ForwardFailedException.Kind.TIMEOUT);
		assertThat(failure).hasMessageContaining("no confirm within 200 ms");
		assertThat(channel.awaitClose()).as("a late confirm may still arrive on it").isTrue();
		channel.ack();
		assertThat(result).isCompletedExceptionally();
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("channelCloses")
	void channelClosedUnderThePublishFailsItWithTheKindOfTheClose(String close, ShutdownSignalException signal,
			ForwardFailedException.Kind kind, String message) throws Exception {
		CompletableFuture<Void> result = publish("retry.delay", "orders");
		FakeChannel channel = this.channels.awaitPublish(0);
		channel.closedBy(signal);

		ForwardFailedException failure = failureOf(result);
		assertThat(failure.getKind()).isEqualTo(kind);
		assertThat(failure).hasMessageContaining(message);
		assertThat(channel.awaitClose()).isTrue();
	}

	static Stream<Arguments> channelCloses() {
		return Stream.of(
				Arguments.of("closed for a missing exchange",
						channelClose(AMQP.NOT_FOUND, "NOT_FOUND - no exchange 'retry.delay'"),
						ForwardFailedException.Kind.MISSING_EXCHANGE, "no exchange 'retry.delay'"),
				Arguments.of("lost connection",
						connectionClose(AMQP.CONNECTION_FORCED, "CONNECTION_FORCED - broker forced connection closure"),
						ForwardFailedException.Kind.PUBLISH_ERROR, "channel closed"));
	}

	@Test
	void channelClosedBeforeItsShutdownListenerCouldRunIsNeverReportedAsConfirmed() throws Exception {
		// The broker closed the channel for the missing exchange while the publish was
		// being made: no shutdown callback reaches this publish, and no confirm will ever
		// come. It must fail now, not succeed or time out.
		this.channels.onPublish = (channel) -> {
			channel.open = false;
			channel.closeReason = channelClose(AMQP.NOT_FOUND, "NOT_FOUND - no exchange 'retry.delay'");
		};
		CompletableFuture<Void> result = publish("retry.delay", "orders");

		assertThat(failureOf(result).getKind()).isEqualTo(ForwardFailedException.Kind.MISSING_EXCHANGE);
		FakeChannel channel = this.channels.awaitPublish(0);
		channel.ack();
		assertThat(result).isCompletedExceptionally();
	}

	@Test
	void publishOnAChannelThatIsAlreadyClosedFailsWithTheReasonOfTheClose() throws Exception {
		this.channels.publishFailure = new AlreadyClosedException(
				channelClose(AMQP.NOT_FOUND, "NOT_FOUND - no exchange 'retry.delay'"));
		CompletableFuture<Void> result = publish("retry.delay", "orders");

		assertThat(failureOf(result).getKind()).isEqualTo(ForwardFailedException.Kind.MISSING_EXCHANGE);
		assertThat(this.channels.opened.get(0).awaitClose()).isTrue();
	}

	@Test
	void publishThatGetsNoChannelFailsAndFreesItsSlotForTheNextPublish() throws Exception {
		this.channels.connectionFailures = 1;
		ConfirmedPublisher publisher = publisher(this.channels.cachingFactory(1), Duration.ofMinutes(1));

		CompletableFuture<Void> first = publisher.publishAsSent("", "orders", PROPERTIES, BODY);
		ForwardFailedException failure = failureOf(first);
		assertThat(failure.getKind()).isEqualTo(ForwardFailedException.Kind.PUBLISH_ERROR);
		assertThat(failure).hasMessageContaining("no channel");

		CompletableFuture<Void> second = publisher.publishAsSent("", "orders", PROPERTIES, BODY);
		FakeChannel channel = this.channels.awaitPublish(0);
		channel.ack();
		assertThat(second).succeedsWithin(Duration.ofSeconds(5));
	}

	@Test
	void publishesBeyondTheCachedChannelsWaitForAChannelToBeGivenBack() throws Exception {
		ConfirmedPublisher publisher = publisher(this.channels.cachingFactory(1), Duration.ofMinutes(1));

		CompletableFuture<Void> first = publisher.publishAsSent("", "orders", PROPERTIES, BODY);
		CompletableFuture<Void> second = publisher.publishAsSent("", "orders", PROPERTIES, BODY);
		FakeChannel firstChannel = this.channels.awaitPublish(0);
		// The publisher thread takes publishes in order: once it ran a task submitted
		// after both, the second has either taken a channel or is waiting for one.
		assertThat(CompletableFuture.runAsync(() -> {
		}, this.executors.publisher())).succeedsWithin(Duration.ofSeconds(5));
		assertThat(this.channels.opened).hasSize(1);
		assertThat(second).isNotDone();

		firstChannel.ack();
		FakeChannel secondChannel = this.channels.awaitPublish(1);
		assertThat(firstChannel.awaitClose()).isFalse();
		secondChannel.ack();

		assertThat(first).succeedsWithin(Duration.ofSeconds(5));
		assertThat(second).succeedsWithin(Duration.ofSeconds(5));
	}

	@Test
	void whileTheBrokerBlocksPublishingPublishesAreHeldAndGoOutWhenItUnblocks() throws Exception {
		ConfirmedPublisher publisher = publisherWhileBlocked();

		CompletableFuture<Void> result = publisher.publish("", "orders", PROPERTIES, BODY);
		assertThat(publisher.isBlocked()).isTrue();
		assertThat(result).isNotDone();
		verify(this.factory, never()).createConnection();

		this.blockedState.handleUnblocked();
		FakeChannel channel = this.channels.awaitPublish(0);
		channel.ack();
		assertThat(result).succeedsWithin(Duration.ofSeconds(5));
	}

	@Test
	void publishAndWaitFailsAtOnceAsBlockedWhileTheBrokerBlocksPublishing() {
		ConfirmedPublisher publisher = publisherWhileBlocked();

		assertThatExceptionOfType(ForwardFailedException.class)
			.isThrownBy(() -> publisher.publishAndWait("", "orders", PROPERTIES, BODY))
			.satisfies((ex) -> assertThat(ex.getKind()).isEqualTo(ForwardFailedException.Kind.BLOCKED))
			.withMessageContaining("low on memory");
		verify(this.factory, never()).createConnection();
	}

	@Test
	void publishAndWaitFailsAsBlockedWhenTheBrokerBlocksBeforeItsPublishStartedAndNeverPublishesLater()
			throws Exception {
		ConfirmedPublisher publisher = publisher(this.factory, Duration.ofMillis(500));
		CompletableFuture<Void> publisherThreadBusy = new CompletableFuture<>();
		this.executors.publisher().execute(publisherThreadBusy::join);
		AtomicReference<Throwable> thrown = new AtomicReference<>();
		Thread caller = new Thread(
				() -> thrown.set(catchThrowable(() -> publisher.publishAndWait("", "orders", PROPERTIES, BODY))));
		caller.start();
		// The check at the call passed; the caller waits while its publish waits for the
		// publisher thread.
		await().atMost(Duration.ofSeconds(5)).until(() -> caller.getState() == Thread.State.TIMED_WAITING);

		this.blockedState.handleBlocked("low on memory");
		publisherThreadBusy.complete(null);

		caller.join(1500);
		assertThat(thrown.get()).as("publishAndWait ended, well before its 2 s bound")
			.isInstanceOfSatisfying(ForwardFailedException.class,
					(ex) -> assertThat(ex.getKind()).isEqualTo(ForwardFailedException.Kind.BLOCKED))
			.hasMessageContaining("low on memory");
		this.blockedState.handleUnblocked();
		CompletableFuture<Void> publisherThreadPassed = CompletableFuture.runAsync(() -> {
		}, this.executors.publisher());
		assertThat(publisherThreadPassed).succeedsWithin(Duration.ofSeconds(5));
		assertThat(this.channels.opened).as("nothing published after the caller was told it failed").isEmpty();
	}

	@Test
	void publishAndWaitReturnsOnceTheBrokerConfirms() throws Exception {
		ConfirmedPublisher publisher = publisher(this.factory, Duration.ofMinutes(1));
		this.channels.onPublish = (channel) -> channel.confirmLater();

		publisher.publishAndWait("", "orders", PROPERTIES, BODY);

		assertThat(this.channels.opened).hasSize(1);
	}

	@Test
	void publishAndWaitThrowsTheFailureOfThePublish() {
		ConfirmedPublisher publisher = publisher(this.factory, Duration.ofMinutes(1));
		this.channels.onPublish = (channel) -> channel.nackLater();

		assertThatExceptionOfType(ForwardFailedException.class)
			.isThrownBy(() -> publisher.publishAndWait("", "orders", PROPERTIES, BODY))
			.satisfies((ex) -> assertThat(ex.getKind()).isEqualTo(ForwardFailedException.Kind.NACKED));
	}

	@Test
	void confirmTimeoutDoesNotRunOutWhileTheBrokerBlocksPublishing() throws Exception {
		ConfirmedPublisher publisher = publisher(this.factory, Duration.ofMillis(300));
		// The broker blocks the connection right after the publish, well within the
		// confirm timeout.
		this.channels.onPublish = (channel) -> this.blockedState.handleBlocked("low on disk");

		CompletableFuture<Void> result = publisher.publish("", "orders", PROPERTIES, BODY);
		FakeChannel channel = this.channels.awaitPublish(0);
		// The confirm timeout runs on the executors' timer, which runs its tasks in the
		// order they fall due: once a task due three timeouts after the publish ran, the
		// timeout ran out at least twice.
		CompletableFuture<Void> threeTimeoutsLater = new CompletableFuture<>();
		this.executors.schedule(() -> threeTimeoutsLater.complete(null), Duration.ofMillis(900), Runnable::run);
		assertThat(threeTimeoutsLater).succeedsWithin(Duration.ofSeconds(3));
		assertThat(result).isNotDone();
		channel.ack();

		assertThat(result).succeedsWithin(Duration.ofSeconds(5));
	}

	@Test
	void releasingHeldPublishesFailsThemAsBlockedAndPublishesNothing() {
		ConfirmedPublisher publisher = publisherWhileBlocked();
		CompletableFuture<Void> held = publisher.publish("", "orders", PROPERTIES, BODY);

		publisher.releaseHeld();

		assertThat(failureOf(held).getKind()).isEqualTo(ForwardFailedException.Kind.BLOCKED);
		this.blockedState.handleUnblocked();
		verify(this.factory, never()).createConnection();
	}

	@Test
	void closedPublisherFailsHeldAndNewPublishesWithoutPublishing() {
		ConfirmedPublisher publisher = publisherWhileBlocked();
		CompletableFuture<Void> held = publisher.publish("", "orders", PROPERTIES, BODY);

		publisher.close();
		this.blockedState.handleUnblocked();
		CompletableFuture<Void> afterClose = publisher.publish("", "orders", PROPERTIES, BODY);

		assertThat(failureOf(held).getKind()).isEqualTo(ForwardFailedException.Kind.BLOCKED);
		ForwardFailedException failure = failureOf(afterClose);
		assertThat(failure.getKind()).isEqualTo(ForwardFailedException.Kind.PUBLISH_ERROR);
		assertThat(failure).hasMessageContaining("the publisher is closed");
		verify(this.factory, never()).createConnection();
	}

	@Test
	void closeWaitsForAPublishOnItsWayToBeSettled() throws Exception {
		ConfirmedPublisher publisher = publisher(this.factory, Duration.ofSeconds(30));
		CompletableFuture<Void> result = publisher.publish("", "orders", PROPERTIES, BODY);
		FakeChannel channel = this.channels.awaitPublish(0);

		CompletableFuture<Void> closing = new CompletableFuture<>();
		Thread closer = new Thread(() -> {
			publisher.close();
			closing.complete(null);
		});
		closer.start();
		// close() waits (timed, up to the confirm timeout) only for unsettled publishes.
		await().atMost(Duration.ofSeconds(5)).until(() -> closer.getState() == Thread.State.TIMED_WAITING);
		assertThat(closing).isNotDone();
		channel.ack();

		assertThat(closing).succeedsWithin(Duration.ofSeconds(5));
		assertThat(result).succeedsWithin(Duration.ofSeconds(5));
	}

	@Test
	void publishAfterTheExecutorsAreClosedFailsWithoutThrowing() {
		ConfirmedPublisher publisher = publisher(this.factory, Duration.ofMinutes(1));
		this.executors.close(Duration.ZERO);

		CompletableFuture<Void> result = publisher.publish("", "orders", PROPERTIES, BODY);

		assertThat(failureOf(result).getKind()).isEqualTo(ForwardFailedException.Kind.PUBLISH_ERROR);
		verify(this.factory, never()).createConnection();
	}

	@Test
	void missingExchangeIsRecognisedAnywhereInTheCauseChainOfAChannelClose() {
		ShutdownSignalException notFound = channelClose(AMQP.NOT_FOUND, "NOT_FOUND - no exchange 'x'");
		assertThat(ConfirmedPublisher.errorKind(notFound)).isEqualTo(ForwardFailedException.Kind.MISSING_EXCHANGE);
		assertThat(ConfirmedPublisher.errorKind(new IOException(new IllegalStateException(notFound))))
			.isEqualTo(ForwardFailedException.Kind.MISSING_EXCHANGE);
	}

	@Test
	void otherClosesAndFailuresAreAPublishError() {
		assertThat(ConfirmedPublisher.errorKind(channelClose(AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED")))
			.isEqualTo(ForwardFailedException.Kind.PUBLISH_ERROR);
		assertThat(ConfirmedPublisher.errorKind(connectionClose(AMQP.NOT_FOUND, "NOT_FOUND")))
			.isEqualTo(ForwardFailedException.Kind.PUBLISH_ERROR);
		assertThat(ConfirmedPublisher.errorKind(new IOException("connection reset")))
			.isEqualTo(ForwardFailedException.Kind.PUBLISH_ERROR);
		assertThat(ConfirmedPublisher.errorKind(null)).isEqualTo(ForwardFailedException.Kind.PUBLISH_ERROR);
	}

	/**
	 * Forwards to the starter's own exchanges: they share a few confirm channels, each
	 * settled by the confirm that covers its sequence number.
	 */
	@Nested
	class Forwards {

		private static final byte[] OTHER_BODY = "order 43".getBytes();

		/** A publisher whose forwards share one channel. */
		private final ConfirmedPublisher publisher = new ConfirmedPublisher(ConfirmedPublisherTests.this.factory,
				Duration.ofMinutes(1), ConfirmedPublisherTests.this.executors,
				ConfirmedPublisherTests.this.blockedState, 1);

		private final FakeChannels channels = ConfirmedPublisherTests.this.channels;

		@Test
		void forwardsShareOneChannelAndEachIsSettledByTheConfirmOfItsSequenceNumber() throws Exception {
			this.channels.nextSequenceNumber = 7;
			CompletableFuture<Void> first = forward("retry.delay", "orders", BODY);
			CompletableFuture<Void> second = forward("retry.delay", "orders", BODY);
			CompletableFuture<Void> third = forward("retry.delay", "payments", OTHER_BODY);
			FakeChannel channel = this.channels.awaitPublishes(0, 3);
			assertThat(channel.publishes).containsExactly(7L, 8L, 9L);

			channel.confirms().handleAck(8, false);
			assertThat(second).succeedsWithin(Duration.ofSeconds(5));
			assertThat(first).isNotDone();
			assertThat(third).isNotDone();
			channel.confirms().handleAck(9, true);

			assertThat(first).succeedsWithin(Duration.ofSeconds(5));
			assertThat(third).succeedsWithin(Duration.ofSeconds(5));
			assertThat(this.channels.opened).as("one channel for all three").hasSize(1);
			assertThat(channel.closedForGood).as("kept for the next forwards").isNotDone();
		}

		@Test
		void nackFailsTheForwardsItCoversAndTheChannelCarriesTheNextForward() throws Exception {
			CompletableFuture<Void> first = forward("retry.delay", "orders", BODY);
			CompletableFuture<Void> second = forward("retry.delay", "orders", BODY);
			FakeChannel channel = this.channels.awaitPublishes(0, 2);
			channel.confirms().handleNack(1, false);

			assertThat(failureOf(first).getKind()).isEqualTo(ForwardFailedException.Kind.NACKED);
			assertThat(second).isNotDone();
			CompletableFuture<Void> third = forward("retry.delay", "orders", BODY);
			this.channels.awaitPublishes(0, 3);
			channel.confirms().handleAck(3, true);
			assertThat(second).succeedsWithin(Duration.ofSeconds(5));
			assertThat(third).succeedsWithin(Duration.ofSeconds(5));
			assertThat(this.channels.opened).hasSize(1);
		}

		@Test
		void returnFailsTheForwardWithTheSameExchangeRoutingKeyAndBodyWhenItsConfirmArrives() throws Exception {
			CompletableFuture<Void> routed = forward("retry.delay", "orders", BODY);
			CompletableFuture<Void> otherBody = forward("retry.delay", "gone", OTHER_BODY);
			CompletableFuture<Void> unroutable = forward("retry.delay", "gone", BODY);
			FakeChannel channel = this.channels.awaitPublishes(0, 3);
			channel.returns().handleReturn(312, "NO_ROUTE", "retry.delay", "gone", PROPERTIES, BODY.clone());
			assertThat(unroutable).as("settled by the confirm that follows the return").isNotDone();
			channel.confirms().handleAck(3, true);

			assertThat(routed).succeedsWithin(Duration.ofSeconds(5));
			assertThat(otherBody).succeedsWithin(Duration.ofSeconds(5));
			ForwardFailedException failure = failureOf(unroutable);
			assertThat(failure.getKind()).isEqualTo(ForwardFailedException.Kind.RETURNED);
			assertThat(failure).hasMessageContaining("312 NO_ROUTE").hasMessageContaining("'gone'");
		}

		@Test
		void twoReturnsOfTheSameMessageFailTwoForwards() throws Exception {
			CompletableFuture<Void> first = forward("retry.delay", "gone", BODY);
			CompletableFuture<Void> second = forward("retry.delay", "gone", BODY);
			FakeChannel channel = this.channels.awaitPublishes(0, 2);
			channel.returns().handleReturn(312, "NO_ROUTE", "retry.delay", "gone", PROPERTIES, BODY);
			channel.returns().handleReturn(312, "NO_ROUTE", "retry.delay", "gone", PROPERTIES, BODY);
			channel.confirms().handleAck(2, true);

			assertThat(failureOf(first).getKind()).isEqualTo(ForwardFailedException.Kind.RETURNED);
			assertThat(failureOf(second).getKind()).isEqualTo(ForwardFailedException.Kind.RETURNED);
		}

		@Test
		void channelThatDiesFailsEveryForwardInFlightOnItAndOnlyThoseToTheMissingExchangeAsMissing() throws Exception {
			CompletableFuture<Void> confirmed = forward("retry.delay", "orders", BODY);
			CompletableFuture<Void> toMissing = forward("retry.delay", "orders", BODY);
			CompletableFuture<Void> toOther = forward("retry.return", "orders", BODY);
			FakeChannel channel = this.channels.awaitPublishes(0, 3);
			channel.confirms().handleAck(1, false);
			channel.closedBy(channelClose(AMQP.NOT_FOUND, "NOT_FOUND - no exchange 'retry.delay' in vhost '/'"));

			assertThat(confirmed).succeedsWithin(Duration.ofSeconds(5));
			assertThat(failureOf(toMissing).getKind()).isEqualTo(ForwardFailedException.Kind.MISSING_EXCHANGE);
			ForwardFailedException other = failureOf(toOther);
			assertThat(other.getKind()).as("to be forwarded again")
				.isEqualTo(ForwardFailedException.Kind.PUBLISH_ERROR);
			assertThat(other).hasMessageContaining("channel closed");

			CompletableFuture<Void> next = forward("retry.return", "orders", BODY);
			FakeChannel reopened = this.channels.awaitPublishes(1, 1);
			assertThat(channel.awaitClose()).as("the dead channel is let go for good").isTrue();
			reopened.ack();
			assertThat(next).succeedsWithin(Duration.ofSeconds(5));
		}

		@Test
		void channelClosedUnderThePublishBeforeItsShutdownListenerRanFailsTheForward() throws Exception {
			this.channels.onPublish = (channel) -> {
				channel.open = false;
				channel.closeReason = channelClose(AMQP.NOT_FOUND, "NOT_FOUND - no exchange 'retry.delay'");
			};
			CompletableFuture<Void> result = forward("retry.delay", "orders", BODY);

			assertThat(failureOf(result).getKind()).isEqualTo(ForwardFailedException.Kind.MISSING_EXCHANGE);
			this.channels.awaitPublishes(0, 1).ack();
			assertThat(result).isCompletedExceptionally();
		}

		@Test
		void publishThatThrowsFailsEveryForwardInFlightOnTheChannel() throws Exception {
			CompletableFuture<Void> inFlight = forward("retry.delay", "orders", BODY);
			FakeChannel channel = this.channels.awaitPublishes(0, 1);
			willThrow(new AlreadyClosedException(connectionClose(AMQP.CONNECTION_FORCED, "CONNECTION_FORCED")))
				.given(channel.real)
				.basicPublish(anyString(), anyString(), anyBoolean(), any(AMQP.BasicProperties.class),
						any(byte[].class));
			CompletableFuture<Void> failing = forward("retry.delay", "orders", BODY);

			assertThat(failureOf(failing).getKind()).isEqualTo(ForwardFailedException.Kind.PUBLISH_ERROR);
			assertThat(failureOf(inFlight).getKind()).isEqualTo(ForwardFailedException.Kind.PUBLISH_ERROR);
		}

		@Test
		void timedOutForwardFailsAndItsLateConfirmSettlesNoOtherForward() throws Exception {
			ConfirmedPublisher quick = new ConfirmedPublisher(ConfirmedPublisherTests.this.factory,
					Duration.ofMillis(200), ConfirmedPublisherTests.this.executors,
					ConfirmedPublisherTests.this.blockedState, 1);
			CompletableFuture<Void> timedOut = quick.publish("retry.delay", "orders", PROPERTIES, BODY);
			FakeChannel channel = this.channels.awaitPublishes(0, 1);
			assertThat(failureOf(timedOut).getKind()).isEqualTo(ForwardFailedException.Kind.TIMEOUT);

			CompletableFuture<Void> next = quick.publish("retry.delay", "orders", PROPERTIES, BODY);
			this.channels.awaitPublishes(0, 2);
			channel.confirms().handleAck(1, false);
			assertThat(next).isNotDone();
			channel.confirms().handleAck(2, false);
			assertThat(next).succeedsWithin(Duration.ofSeconds(5));
			assertThat(channel.closedForGood).as("still carries forwards").isNotDone();
		}

		@Test
		void forwardThatGetsNoChannelFailsAndTheNextForwardOpensOne() throws Exception {
			this.channels.connectionFailures = 1;
			CompletableFuture<Void> first = forward("retry.delay", "orders", BODY);
			ForwardFailedException failure = failureOf(first);
			assertThat(failure.getKind()).isEqualTo(ForwardFailedException.Kind.PUBLISH_ERROR);
			assertThat(failure).hasMessageContaining("no channel");

			CompletableFuture<Void> second = forward("retry.delay", "orders", BODY);
			this.channels.awaitPublishes(0, 1).ack();
			assertThat(second).succeedsWithin(Duration.ofSeconds(5));
		}

		@Test
		void theFirstForwardOpensEveryChannelSoThatNoLaterForwardWaitsForAnOpen() throws Exception {
			ConfirmedPublisher twoChannels = new ConfirmedPublisher(ConfirmedPublisherTests.this.factory,
					Duration.ofMinutes(1), ConfirmedPublisherTests.this.executors,
					ConfirmedPublisherTests.this.blockedState, 2);
			twoChannels.publish("retry.delay", "orders", PROPERTIES, BODY);
			this.channels.awaitPublishes(0, 1);

			assertThat(this.channels.opened).hasSize(2);
		}

		@Test
		void forwardsTakeTheChannelsInTurn() throws Exception {
			ConfirmedPublisher twoChannels = new ConfirmedPublisher(ConfirmedPublisherTests.this.factory,
					Duration.ofMinutes(1), ConfirmedPublisherTests.this.executors,
					ConfirmedPublisherTests.this.blockedState, 2);
			List<CompletableFuture<Void>> results = Stream
				.generate(() -> twoChannels.publish("retry.delay", "orders", PROPERTIES, BODY))
				.limit(5)
				.toList();
			FakeChannel first = this.channels.awaitPublishes(0, 3);
			FakeChannel second = this.channels.awaitPublishes(1, 2);
			assertThat(this.channels.opened).hasSize(2);
			first.confirms().handleAck(first.publishes.get(2), true);
			second.confirms().handleAck(second.publishes.get(1), true);

			assertThat(CompletableFuture.allOf(results.toArray(CompletableFuture[]::new)))
				.succeedsWithin(Duration.ofSeconds(5));
		}

		@Test
		void closeGivesTheSharedChannelBackToTheCacheOnceItsForwardsAreSettled() throws Exception {
			CompletableFuture<Void> result = forward("retry.delay", "orders", BODY);
			FakeChannel channel = this.channels.awaitPublishes(0, 1);
			channel.ack();
			assertThat(result).succeedsWithin(Duration.ofSeconds(5));

			this.publisher.close();

			assertThat(channel.awaitClose()).as("given back, not closed for good").isFalse();
			verify(channel.real).removeConfirmListener(channel.confirms());
		}

		private CompletableFuture<Void> forward(String exchange, String routingKey, byte[] body) {
			return this.publisher.publish(exchange, routingKey, PROPERTIES, body);
		}

	}

	/**
	 * Publishes the test message as sent (on a channel of its own) to the given exchange
	 * and routing key through a publisher of its own, with a confirm timeout of a minute.
	 */
	private CompletableFuture<Void> publish(String exchange, String routingKey) {
		return publisher(this.factory, Duration.ofMinutes(1)).publishAsSent(exchange, routingKey, PROPERTIES, BODY);
	}

	/**
	 * A publisher on {@link #factory} (confirm timeout of a minute) while the broker
	 * blocks publishing for low memory.
	 */
	private ConfirmedPublisher publisherWhileBlocked() {
		ConfirmedPublisher publisher = publisher(this.factory, Duration.ofMinutes(1));
		this.blockedState.handleBlocked("low on memory");
		return publisher;
	}

	private ConfirmedPublisher publisher(ConnectionFactory connectionFactory, Duration confirmTimeout) {
		return new ConfirmedPublisher(connectionFactory, confirmTimeout, this.executors, this.blockedState);
	}

	private static ShutdownSignalException channelClose(int replyCode, String replyText) {
		AMQP.Channel.Close close = new AMQP.Channel.Close.Builder().replyCode(replyCode).replyText(replyText).build();
		return new ShutdownSignalException(false, false, close, null);
	}

	private static ShutdownSignalException connectionClose(int replyCode, String replyText) {
		AMQP.Connection.Close close = new AMQP.Connection.Close.Builder().replyCode(replyCode)
			.replyText(replyText)
			.build();
		return new ShutdownSignalException(true, false, close, null);
	}

	private static ForwardFailedException failureOf(CompletableFuture<Void> result) {
		Throwable thrown = catchThrowable(() -> result.get(5, TimeUnit.SECONDS));
		assertThat(thrown).isInstanceOf(ExecutionException.class).cause().isInstanceOf(ForwardFailedException.class);
		return (ForwardFailedException) thrown.getCause();
	}

	/**
	 * Hands out a new fake channel for every channel the publisher takes from the
	 * connection.
	 */
	static final class FakeChannels {

		final List<FakeChannel> opened = new CopyOnWriteArrayList<>();

		volatile long nextSequenceNumber = 1;

		volatile int connectionFailures;

		volatile @Nullable RuntimeException publishFailure;

		volatile ChannelAction onPublish = (channel) -> {
		};

		ConnectionFactory factory() {
			return stub(mock(ConnectionFactory.class));
		}

		/** A caching factory whose cache holds the given number of channels. */
		ConnectionFactory cachingFactory(int channelCacheSize) {
			CachingConnectionFactory factory = mock(CachingConnectionFactory.class);
			given(factory.getChannelCacheSize()).willReturn(channelCacheSize);
			return stub(factory);
		}

		private <T extends ConnectionFactory> T stub(T factory) {
			Connection connection = mock(Connection.class);
			given(factory.getUsername()).willReturn("guest");
			given(factory.createConnection()).willAnswer((invocation) -> {
				if (this.connectionFailures > 0) {
					this.connectionFailures--;
					throw new AmqpConnectException(new ConnectException("Connection refused"));
				}
				return connection;
			});
			given(connection.createChannel(anyBoolean())).willAnswer((invocation) -> {
				FakeChannel channel = new FakeChannel(this.nextSequenceNumber, this);
				this.opened.add(channel);
				return channel.cached;
			});
			return factory;
		}

		/**
		 * The channel at the given index, once it carried the given number of publishes.
		 */
		FakeChannel awaitPublishes(int index, int count) {
			await().atMost(Duration.ofSeconds(5))
				.pollInterval(Duration.ofMillis(10))
				.until(() -> this.opened.size() > index && this.opened.get(index).publishes.size() >= count);
			return this.opened.get(index);
		}

		FakeChannel awaitPublish(int index) {
			await().atMost(Duration.ofSeconds(5))
				.pollInterval(Duration.ofMillis(10))
				.until(() -> this.opened.size() > index && this.opened.get(index).published.isDone());
			return this.opened.get(index);
		}

	}

	@FunctionalInterface
	interface ChannelAction {

		void run(FakeChannel channel);

	}

	/**
	 * A cached-channel proxy and its real channel. Records the listeners the publish
	 * registers, and whether the channel was given back to the cache ({@code false}) or
	 * closed for good ({@code true}).
	 */
	static final class FakeChannel {

		final ChannelProxy cached = mock(ChannelProxy.class);

		final Channel real = mock(Channel.class);

		final long sequenceNumber;

		final CompletableFuture<Void> published = new CompletableFuture<>();

		/** The sequence numbers of the publishes on it, in order. */
		final List<Long> publishes = new CopyOnWriteArrayList<>();

		private final AtomicLong nextPublishSeqNo;

		final CompletableFuture<Boolean> closedForGood = new CompletableFuture<>();

		volatile boolean open = true;

		volatile @Nullable ShutdownSignalException closeReason;

		private volatile @Nullable ConfirmListener confirms;

		private volatile @Nullable ReturnListener returns;

		private volatile @Nullable ShutdownListener shutdowns;

		FakeChannel(long sequenceNumber, FakeChannels channels) throws Exception {
			this.sequenceNumber = sequenceNumber;
			this.nextPublishSeqNo = new AtomicLong(sequenceNumber);
			com.rabbitmq.client.Connection connection = mock(com.rabbitmq.client.Connection.class);
			given(connection.getFrameMax()).willReturn(131_072);
			given(this.cached.getTargetChannel()).willReturn(this.real);
			given(this.real.getConnection()).willReturn(connection);
			given(this.real.getNextPublishSeqNo()).willAnswer((invocation) -> this.nextPublishSeqNo.get());
			given(this.real.isOpen()).willAnswer((invocation) -> this.open);
			given(this.real.getCloseReason()).willAnswer((invocation) -> this.closeReason);
			willAnswer((invocation) -> this.confirms = invocation.getArgument(0)).given(this.real)
				.addConfirmListener(any(ConfirmListener.class));
			willAnswer((invocation) -> this.returns = invocation.getArgument(0)).given(this.real)
				.addReturnListener(any(ReturnListener.class));
			willAnswer((invocation) -> this.shutdowns = invocation.getArgument(0)).given(this.real)
				.addShutdownListener(any(ShutdownListener.class));
			RuntimeException publishFailure = channels.publishFailure;
			if (publishFailure != null) {
				willThrow(publishFailure).given(this.real)
					.basicPublish(anyString(), anyString(), anyBoolean(), any(AMQP.BasicProperties.class),
							any(byte[].class));
			}
			else {
				willAnswer((invocation) -> {
					this.publishes.add(this.nextPublishSeqNo.getAndIncrement());
					channels.onPublish.run(this);
					this.published.complete(null);
					return null;
				}).given(this.real)
					.basicPublish(anyString(), anyString(), anyBoolean(), any(AMQP.BasicProperties.class),
							any(byte[].class));
			}
			willAnswer((invocation) -> {
				this.closedForGood.complete(RabbitUtils.isPhysicalCloseRequired());
				return null;
			}).given(this.cached).close();
		}

		ConfirmListener confirms() {
			return require(this.confirms);
		}

		ReturnListener returns() {
			return require(this.returns);
		}

		ShutdownListener shutdowns() {
			return require(this.shutdowns);
		}

		/**
		 * The channel closes (the broker closed it, or its connection) and tells its
		 * shutdown listener.
		 */
		void closedBy(ShutdownSignalException signal) {
			this.open = false;
			shutdowns().shutdownCompleted(signal);
		}

		/**
		 * The broker's confirm of this channel's publish.
		 */
		void ack() throws IOException {
			confirms().handleAck(this.sequenceNumber, false);
		}

		/**
		 * The broker's nack of this channel's publish.
		 */
		void nack() throws IOException {
			confirms().handleNack(this.sequenceNumber, false);
		}

		/**
		 * A confirm from the broker, after the publish has returned (as from the
		 * connection's I/O thread).
		 */
		void confirmLater() {
			CompletableFuture.runAsync(() -> ackQuietly(true));
		}

		void nackLater() {
			CompletableFuture.runAsync(() -> ackQuietly(false));
		}

		private void ackQuietly(boolean ack) {
			try {
				await().atMost(Duration.ofSeconds(5)).until(this.published::isDone);
				if (ack) {
					ack();
				}
				else {
					nack();
				}
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
		}

		/**
		 * Whether the channel was closed for good (rather than given back to the cache),
		 * once it is let go.
		 */
		boolean awaitClose() throws InterruptedException, ExecutionException, TimeoutException {
			return this.closedForGood.get(5, TimeUnit.SECONDS);
		}

		private static <T> T require(@Nullable T listener) {
			assertThat(listener).as("listener registered by the publish").isNotNull();
			return listener;
		}

	}

}
