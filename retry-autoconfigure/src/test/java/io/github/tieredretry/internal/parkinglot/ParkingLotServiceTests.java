package io.github.tieredretry.internal.parkinglot;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongPredicate;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.ShutdownSignalException;
import com.rabbitmq.client.impl.AMQImpl;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.forwarding.ForwardFailedException;
import io.github.tieredretry.observation.RetryObservations;
import io.github.tieredretry.parkinglot.FailureGroup;
import io.github.tieredretry.parkinglot.FailureGroups;
import io.github.tieredretry.parkinglot.ParkedMessage;
import io.github.tieredretry.parkinglot.ParkedMessageFilter;
import io.github.tieredretry.parkinglot.ParkingLotRequest;
import io.github.tieredretry.parkinglot.ParkingLotRequestException;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.parkinglot.PeekResult;
import io.github.tieredretry.parkinglot.PurgeResult;
import io.github.tieredretry.parkinglot.ReplayInProgressException;
import io.github.tieredretry.parkinglot.ReplayPreview;
import io.github.tieredretry.parkinglot.ReplayResult;
import io.github.tieredretry.parkinglot.ReplaySettings;
import io.github.tieredretry.parkinglot.ReplayStatus;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.rabbit.connection.ChannelProxy;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.connection.RabbitUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;
import static org.mockito.ArgumentMatchers.anyBoolean;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.BDDMockito.given;
import static org.mockito.BDDMockito.willAnswer;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;

/**
 * Tests for {@link ParkingLotService} on an in-memory parking lot read through a fake
 * channel that behaves like a classic queue with {@code basic.get}: a nack with requeue
 * puts messages back at the head in their order, an ack removes them, closing the channel
 * requeues whatever it still held. No broker.
 */
class ParkingLotServiceTests {

	private static final Instant NOW = Instant.parse("2026-11-22T06:00:00Z");

	private static final String PARKING_LOT = "retry.parking-lot";

	private final FakeParkingLot parkingLot = new FakeParkingLot();

	private final List<String> log = new CopyOnWriteArrayList<>();

	private final List<Replayed> replayed = new CopyOnWriteArrayList<>();

	private @Nullable ParkingLotService service;

	@AfterEach
	void closeService() {
		if (this.service != null) {
			this.service.close();
		}
	}

	@Test
	void peekDescribesTheOldestParkedMessagesAndLeavesEveryMessageInItsPlace() {
		this.parkingLot.park(parked("o1", "orders", "exhausted", "java.lang.IllegalStateException", "down"));
		this.parkingLot.park(parked("p1", "payments", "not-retryable", "java.lang.IllegalArgumentException", "bad"));
		this.parkingLot.park(parked("o2", "orders", "timeout", "java.lang.IllegalStateException", "down"));

		PeekResult result = service(this::recordReplay).peek(ParkedMessageFilter.ALL, 2, 100);

		assertThat(result.parkingLot()).isEqualTo(PARKING_LOT);
		assertThat(result.depth()).isEqualTo(3);
		assertThat(result.scanned()).isEqualTo(2);
		assertThat(result.partial()).isFalse();
		assertThat(result.messages()).extracting(ParkedMessage::messageId).containsExactly("o1", "p1");
		ParkedMessage first = result.messages().get(0);
		assertThat(first.originQueue()).isEqualTo("orders");
		assertThat(first.parkedReason()).isEqualTo("exhausted");
		assertThat(first.exception()).isEqualTo("java.lang.IllegalStateException");
		assertThat(first.error()).isEqualTo("down");
		assertThat(first.retryCount()).isEqualTo(3);
		assertThat(first.parkedAt()).isEqualTo(NOW.minusSeconds(60));
		assertThat(first.bodyPreview()).isEqualTo("{\"id\":\"o1\"}");
		assertThat(this.parkingLot.ids()).containsExactly("o1", "p1", "o2");
		assertThat(this.parkingLot.acked).isEmpty();
		assertThat(this.parkingLot.channelsClosedForGood).as("a pass never gives its channel back to the cache")
			.containsExactly(true);
	}

	@Test
	void peekByQueueLooksNoFurtherThanItNeeds() {
		parkExhausted("o1", "p1", "o2", "o3");

		PeekResult result = service(this::recordReplay).peek("orders", 2);

		assertThat(result.messages()).extracting(ParkedMessage::messageId).containsExactly("o1", "o2");
		assertThat(result.scanned()).isEqualTo(3);
		assertThat(this.parkingLot.ids()).containsExactly("o1", "p1", "o2", "o3");
	}

	@Test
	void resultThatStoppedAtTheScanLimitSaysItIsPartial() {
		parkNumbered("p", "payments", 5);

		PeekResult peek = service(this::recordReplay).peek(ParkedMessageFilter.forQueue("orders"), 10, 3);

		assertThat(peek.messages()).isEmpty();
		assertThat(peek.scanned()).isEqualTo(3);
		assertThat(peek.partial()).isTrue();
		assertThat(this.parkingLot.ids()).hasSize(5);
	}

	@Test
	void limitsOutOfRangeAreRefusedWithTheirNameBeforeTheParkingLotIsRead() {
		ParkingLotService service = service(this::recordReplay);

		assertThatExceptionOfType(ParkingLotRequestException.class)
			.isThrownBy(() -> service.peek(ParkedMessageFilter.ALL, 0, 100))
			.withMessage("limit must be between 1 and 200 but was 0");
		assertThatExceptionOfType(ParkingLotRequestException.class)
			.isThrownBy(() -> service.peek(ParkedMessageFilter.ALL, 201, 100))
			.withMessageContaining("limit must be between 1 and 200");
		assertThatExceptionOfType(ParkingLotRequestException.class)
			.isThrownBy(() -> service.groups(ParkedMessageFilter.ALL, 1_000_001))
			.withMessageContaining("scanLimit must be between 1 and 1000000");
		assertThatExceptionOfType(ParkingLotRequestException.class)
			.isThrownBy(() -> service.replayMatching(ParkedMessageFilter.ALL, 0))
			.withMessage("limit must be at least 1 but was 0");
		assertThatExceptionOfType(ParkingLotRequestException.class)
			.isThrownBy(() -> service.previewReplay(ParkedMessageFilter.ALL, null, 0))
			.withMessageContaining("scanLimit");
		verify(this.parkingLot.connectionFactory, never()).createConnection();
	}

	@Test
	void groupsCountParkedMessagesByHowTheyFailedLargestFirst() {
		this.parkingLot.park(parked("p1", "payments", "not-retryable", "java.lang.IllegalArgumentException", "bad"));
		this.parkingLot.park(parked("o1", "orders", "exhausted", "java.lang.IllegalStateException", "down"));
		this.parkingLot.park(parked("o2", "orders", "exhausted", "java.lang.IllegalStateException", "down"));

		FailureGroups groups = service(this::recordReplay).groups(ParkedMessageFilter.ALL, 100);

		assertThat(groups.depth()).isEqualTo(3);
		assertThat(groups.scanned()).isEqualTo(3);
		assertThat(groups.groups()).extracting(FailureGroup::originQueue, FailureGroup::count)
			.containsExactly(tuple("orders", 2L), tuple("payments", 1L));
		assertThat(groups.groups().get(0).sampleMessageId()).isEqualTo("o1");
		assertThat(this.parkingLot.ids()).containsExactly("p1", "o1", "o2");
	}

	@Test
	void purgeWithoutFilterIsRefusedUnlessAllIsSaid() {
		parkExhausted("o1");
		ParkingLotService service = service(this::recordReplay);

		assertThatExceptionOfType(ParkingLotRequestException.class)
			.isThrownBy(() -> service
				.purgeAsRequested(new ParkingLotRequest(ParkedMessageFilter.ALL, null, null, false, false)))
			.withMessageContaining("all=true");
		assertThat(this.parkingLot.ids()).containsExactly("o1");

		PurgeResult purged = service
			.purgeAsRequested(new ParkingLotRequest(ParkedMessageFilter.ALL, null, null, false, true));
		assertThat(purged.purged()).isEqualTo(1);
		assertThat(this.parkingLot.ids()).isEmpty();
	}

	@Test
	void purgeByFilterRemovesOnlyMatchingMessagesAndKeepsTheOthersInOrder() {
		parkExhausted("o1", "p1", "o2", "p2");

		long purged = service(this::recordReplay).purge("orders");

		assertThat(purged).isEqualTo(2);
		assertThat(this.parkingLot.ids()).containsExactly("p1", "p2");
		assertThat(this.parkingLot.acked).containsExactly("o1", "o2");
	}

	@Test
	void dryRunsSayWhatWouldHappenAndChangeNothing() {
		parkExhausted("o1");
		this.parkingLot.park(parked("u1", null, "unroutable", null, null));
		parkExhausted("o2");
		ParkingLotService service = service(this::recordReplay);

		PurgeResult purge = service
			.purgeAsRequested(new ParkingLotRequest(ParkedMessageFilter.ALL, null, null, true, false));
		ReplayPreview replay = service.previewReplay(ParkedMessageFilter.ALL, null, 100);

		assertThat(purge.dryRun()).isTrue();
		assertThat(purge.matched()).isEqualTo(3);
		assertThat(purge.purged()).isZero();
		assertThat(replay.wouldMove()).isEqualTo(2);
		assertThat(replay.wouldStay()).isEqualTo(1);
		assertThat(replay.stayedByReason()).containsExactly(Map.entry("no-origin-queue", 1));
		assertThat(this.parkingLot.ids()).containsExactly("o1", "u1", "o2");
		assertThat(this.parkingLot.acked).isEmpty();
		assertThat(this.replayed).isEmpty();
	}

	@Test
	void replayPublishesEachMessageToItsOriginQueueWithItsRetryStateResetAndAcksItOnlyAfterwards() {
		this.parkingLot.park(parked("o1", "orders", "exhausted", "java.lang.IllegalStateException", "down"));
		this.parkingLot.park(parked("u1", null, "unroutable", null, null));

		ReplayResult result = service(this::recordReplay).replayMatching(ParkedMessageFilter.ALL, null);

		assertThat(result.moved()).isEqualTo(1);
		assertThat(result.stayed()).isEqualTo(1);
		assertThat(result.stayedByReason()).containsExactly(Map.entry("no-origin-queue", 1));
		assertThat(this.replayed).singleElement().satisfies((replay) -> {
			assertThat(replay.queue()).isEqualTo("orders");
			assertThat(replay.properties().getMessageId()).isEqualTo("o1");
			assertThat(replay.properties().getHeaders()).containsEntry(RetryHeaders.COUNT, 0L)
				.containsEntry(RetryHeaders.REPLAY_COUNT, 1L)
				.containsEntry(RetryHeaders.REPLAYED_AT, NOW.toEpochMilli())
				.containsEntry("tenant", "acme")
				.doesNotContainKeys(RetryHeaders.QUEUE, RetryHeaders.PARKED_REASON, RetryHeaders.EXCEPTION,
						RetryHeaders.ERROR);
		});
		assertThat(this.log).containsSubsequence("publish o1", "ack o1");
		assertThat(this.parkingLot.ids()).containsExactly("u1");
	}

	@Test
	void messageWhoseOriginQueueIsGoneStaysParkedWithThatReason() {
		parkExhausted("o1");
		Replayer returned = (queue, properties, body) -> {
			throw new ForwardFailedException(ForwardFailedException.Kind.RETURNED, "312 NO_ROUTE");
		};

		ReplayResult result = service(returned).replayMatching(ParkedMessageFilter.ALL, null);

		assertThat(result.moved()).isZero();
		assertThat(result.stayedByReason()).containsExactly(Map.entry("origin-queue-missing", 1));
		assertThat(result.stayedMessages()).singleElement()
			.satisfies((stayed) -> assertThat(stayed.detail()).contains("NO_ROUTE"));
		assertThat(this.parkingLot.ids()).containsExactly("o1");
		assertThat(this.parkingLot.acked).isEmpty();
	}

	@Test
	void onlyOneReplayRunsAtATimeAndTheNextMayStartOnceItEnded() throws Exception {
		parkExhausted("o1");
		Hold hold = new Hold();
		ParkingLotService service = service(holding(hold));

		assertThat(service.replayStatus()).isNull();
		ReplayStatus started = service.startReplay(ParkedMessageFilter.ALL, null);
		assertThat(started.running()).isTrue();
		assertThat(hold.publishing().await(5, TimeUnit.SECONDS)).isTrue();
		assertThatExceptionOfType(ReplayInProgressException.class)
			.isThrownBy(() -> service.replayMatching(ParkedMessageFilter.ALL, null));
		assertThatExceptionOfType(ReplayInProgressException.class)
			.isThrownBy(() -> service.startReplay(ParkedMessageFilter.ALL, null));

		hold.release().countDown();
		await().atMost(Duration.ofSeconds(5)).until(() -> !service.replayStatus().running());
		ReplayStatus ended = service.replayStatus();
		assertThat(ended.id()).isEqualTo(started.id());
		assertThat(ended.state()).isEqualTo(ReplayStatus.FINISHED);
		assertThat(ended.moved()).isEqualTo(1);
		assertThat(service.replayMatching(ParkedMessageFilter.ALL, null).moved()).isZero();
	}

	@Test
	void stoppedReplayLeavesEverythingItDidNotMoveParked() throws Exception {
		parkExhausted("o1", "o2", "o3", "o4");
		Hold hold = new Hold();
		ParkingLotService service = service(holding(hold));

		service.startReplay(ParkedMessageFilter.ALL, null);
		assertThat(hold.publishing().await(5, TimeUnit.SECONDS)).isTrue();
		service.stopReplay();
		hold.release().countDown();
		await().atMost(Duration.ofSeconds(5)).until(() -> !service.replayStatus().running());

		ReplayStatus status = service.replayStatus();
		assertThat(status.state()).isEqualTo(ReplayStatus.STOPPED);
		assertThat(status.moved()).isEqualTo(1);
		assertThat(status.detail()).isEqualTo("stopped by an operator");
		assertThat(this.parkingLot.ids()).containsExactly("o2", "o3", "o4");
	}

	@Test
	void peekDuringABackgroundReplayWaitsForThePassInProgressNotForTheWholeReplay() throws Exception {
		parkNumbered("o", "orders", 50);
		Hold hold = new Hold();
		// One message per pass: the replay thread ends a pass and at once starts the
		// next, forty-nine times.
		ParkingLotService service = service(holding(hold), new ReplaySettings(1_000_000, 1));
		service.startReplay(ParkedMessageFilter.ALL, null);
		assertThat(hold.publishing().await(5, TimeUnit.SECONDS)).isTrue();

		AtomicReference<PeekResult> peeked = new AtomicReference<>();
		Thread peeker = new Thread(() -> peeked.set(service.peek(null, 100)), "peeker");
		peeker.start();
		// The peek waits for the pass in progress, which holds the first message.
		await().atMost(Duration.ofSeconds(5)).until(() -> peeker.getState() == Thread.State.WAITING);
		hold.release().countDown();
		peeker.join(TimeUnit.SECONDS.toMillis(5));

		assertThat(peeked.get()).as("peek ended").isNotNull();
		assertThat(peeked.get().messages()).as("the peek came right after the pass in progress")
			.extracting(ParkedMessage::messageId)
			.first()
			.isEqualTo("o2");
		assertThat(peeked.get().depth()).isEqualTo(49);
		await().atMost(Duration.ofSeconds(5)).until(() -> !service.replayStatus().running());
		assertThat(service.replayStatus().moved()).isEqualTo(50);
	}

	@Test
	void replayThatFailsUnexpectedlyIsReportedAsFailedLosesNothingAndLetsTheNextOneStart() {
		parkExhausted("o1");
		ParkingLotService service = service((queue, properties, body) -> {
			throw new IllegalStateException("replayer bug");
		});

		service.startReplay(ParkedMessageFilter.ALL, null);
		await().atMost(Duration.ofSeconds(5)).until(() -> !service.replayStatus().running());

		ReplayStatus status = service.replayStatus();
		assertThat(status.state()).isEqualTo(ReplayStatus.FAILED);
		assertThat(status.detail()).contains("replayer bug");
		assertThat(this.parkingLot.ids()).containsExactly("o1");
		assertThat(service.previewReplay(ParkedMessageFilter.ALL, null, 10).wouldMove()).isEqualTo(1);
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> service.replayMatching(ParkedMessageFilter.ALL, null))
			.withMessage("replayer bug");
	}

	@Test
	void missingParkingLotFailsWithItsName() {
		this.parkingLot.exists = false;

		assertThatIllegalStateException().isThrownBy(() -> service(this::recordReplay).peek(null, 10))
			.withMessage("The parking lot '" + PARKING_LOT + "' does not exist on the broker");
	}

	private ParkingLotService service(Replayer replayer) {
		return service(replayer, new ReplaySettings(1_000_000, 100));
	}

	private ParkingLotService service(Replayer replayer, ReplaySettings settings) {
		this.service = new DefaultParkingLotService(this.parkingLot.connectionFactory, PARKING_LOT, replayer, settings,
				RetryObservations.DISABLED, Clock.fixed(NOW, ZoneOffset.UTC));
		return this.service;
	}

	private void recordReplay(String queue, AMQP.BasicProperties properties, byte[] body) {
		this.replayed.add(new Replayed(queue, properties));
		this.log.add("publish " + properties.getMessageId());
	}

	/**
	 * A replayer that records each publish, tells that the first one started and holds
	 * every one until released.
	 */
	private Replayer holding(Hold hold) {
		return (queue, properties, body) -> {
			recordReplay(queue, properties, body);
			hold.publishing().countDown();
			awaitQuietly(hold.release());
		};
	}

	/**
	 * Parks the given messages as exhausted, in order: the ids of messages of queue
	 * 'orders' start with "o", those of 'payments' with "p".
	 */
	private void parkExhausted(String... ids) {
		for (String id : ids) {
			this.parkingLot.park(parked(id, id.startsWith("o") ? "orders" : "payments", "exhausted", "E", "x"));
		}
	}

	/**
	 * Parks the given number of messages of a queue as exhausted, with the ids prefix1,
	 * prefix2, ...
	 */
	private void parkNumbered(String idPrefix, String queue, int count) {
		for (int i = 1; i <= count; i++) {
			this.parkingLot.park(parked(idPrefix + i, queue, "exhausted", "E", "x"));
		}
	}

	private static void awaitQuietly(CountDownLatch latch) {
		try {
			latch.await(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Latches around a held replay: the first publish started, and the release of every
	 * publish.
	 */
	private record Hold(CountDownLatch publishing, CountDownLatch release) {

		Hold() {
			this(new CountDownLatch(1), new CountDownLatch(1));
		}

	}

	private static AMQP.BasicProperties parked(String id, @Nullable String queue, String reason,
			@Nullable String exception, @Nullable String error) {
		Map<String, Object> headers = new LinkedHashMap<>();
		if (queue != null) {
			headers.put(RetryHeaders.QUEUE, queue);
			headers.put(RetryHeaders.COUNT, 3L);
			headers.put(RetryHeaders.PARKED_REASON, reason);
			headers.put(RetryHeaders.PARKED_AT, NOW.minusSeconds(60).toEpochMilli());
			headers.put(RetryHeaders.FIRST_FAILURE, NOW.minusSeconds(120).toEpochMilli());
		}
		if (exception != null) {
			headers.put(RetryHeaders.EXCEPTION, exception);
		}
		if (error != null) {
			headers.put(RetryHeaders.ERROR, error);
		}
		headers.put("tenant", "acme");
		return new AMQP.BasicProperties.Builder().messageId(id)
			.contentType("application/json")
			.contentEncoding("UTF-8")
			.headers(headers)
			.build();
	}

	record Replayed(String queue, AMQP.BasicProperties properties) {
	}

	/**
	 * A classic queue read with {@code basic.get} on channels of a fake connection
	 * factory; every pass takes a new channel, whose delivery tags start at 1.
	 */
	final class FakeParkingLot {

		final ConnectionFactory connectionFactory = mock(ConnectionFactory.class);

		final List<String> acked = new CopyOnWriteArrayList<>();

		final List<Boolean> channelsClosedForGood = new CopyOnWriteArrayList<>();

		volatile boolean exists = true;

		private final List<AMQP.BasicProperties> ready = new ArrayList<>();

		FakeParkingLot() {
			Connection connection = mock(Connection.class);
			given(this.connectionFactory.createConnection()).willReturn(connection);
			given(connection.createChannel(anyBoolean())).willAnswer((invocation) -> newChannel());
		}

		synchronized void park(AMQP.BasicProperties properties) {
			this.ready.add(properties);
		}

		synchronized List<String> ids() {
			return this.ready.stream().map(AMQP.BasicProperties::getMessageId).toList();
		}

		private Channel newChannel() throws Exception {
			Channel real = mock(Channel.class);
			ChannelProxy cached = mock(ChannelProxy.class);
			given(cached.getTargetChannel()).willReturn(real);
			Map<Long, AMQP.BasicProperties> unacked = new LinkedHashMap<>();
			long[] lastTag = { 0 };
			given(real.queueDeclarePassive(PARKING_LOT)).willAnswer((invocation) -> {
				if (!this.exists) {
					AMQP.Channel.Close close = new AMQP.Channel.Close.Builder().replyCode(AMQP.NOT_FOUND)
						.replyText("NOT_FOUND - no queue '" + PARKING_LOT + "'")
						.classId(50)
						.methodId(10)
						.build();
					throw new IOException(new ShutdownSignalException(false, false, close, null));
				}
				return new AMQImpl.Queue.DeclareOk(PARKING_LOT, readyCount(), 0);
			});
			given(real.basicGet(PARKING_LOT, false)).willAnswer((invocation) -> {
				synchronized (this) {
					if (this.ready.isEmpty()) {
						return null;
					}
					AMQP.BasicProperties properties = this.ready.remove(0);
					unacked.put(++lastTag[0], properties);
					byte[] body = ("{\"id\":\"" + properties.getMessageId() + "\"}").getBytes();
					return new GetResponse(new Envelope(lastTag[0], false, "", PARKING_LOT), properties, body,
							this.ready.size());
				}
			});
			willAnswer((invocation) -> {
				synchronized (this) {
					AMQP.BasicProperties properties = unacked.remove((long) invocation.getArgument(0));
					this.acked.add(properties.getMessageId());
					ParkingLotServiceTests.this.log.add("ack " + properties.getMessageId());
				}
				return null;
			}).given(real).basicAck(anyLong(), anyBoolean());
			willAnswer((invocation) -> {
				long upTo = invocation.getArgument(0);
				boolean multiple = invocation.getArgument(1);
				requeue(unacked, (tag) -> multiple ? tag <= upTo : tag == upTo);
				return null;
			}).given(real).basicNack(anyLong(), anyBoolean(), anyBoolean());
			willAnswer((invocation) -> {
				this.channelsClosedForGood.add(RabbitUtils.isPhysicalCloseRequired());
				// The broker puts back whatever a closed channel still held.
				requeue(unacked, (tag) -> true);
				return null;
			}).given(cached).close();
			given(real.queuePurge(anyString())).willAnswer((invocation) -> {
				synchronized (this) {
					int purged = this.ready.size();
					this.ready.clear();
					return new AMQImpl.Queue.PurgeOk(purged);
				}
			});
			return cached;
		}

		private synchronized int readyCount() {
			return this.ready.size();
		}

		/** Requeued messages go back to the head of the queue, in their order. */
		private synchronized void requeue(Map<Long, AMQP.BasicProperties> unacked, LongPredicate which) {
			List<AMQP.BasicProperties> back = new ArrayList<>();
			unacked.entrySet().removeIf((entry) -> {
				if (which.test(entry.getKey())) {
					back.add(entry.getValue());
					return true;
				}
				return false;
			});
			this.ready.addAll(0, back);
		}

	}

}
