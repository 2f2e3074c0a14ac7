package io.github.tieredretry.internal.parkinglot;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.GetResponse;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.forwarding.ForwardFailedException;
import io.github.tieredretry.internal.parkinglot.ParkingLotScanner.Decision;
import io.github.tieredretry.observation.RetryObservations;
import io.github.tieredretry.parkinglot.ParkedMessageFilter;
import io.github.tieredretry.parkinglot.ReplayResult;
import io.github.tieredretry.parkinglot.ReplaySettings;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ReplayRun} on an in-memory parking lot that behaves like a classic
 * queue read with {@code basic.get}: kept messages go back to their place at the end of a
 * pass, removed ones are gone.
 */
class ReplayRunTests {

	static final Instant NOW = Instant.parse("2026-11-22T06:00:00Z");

	final InMemoryParkingLot parkingLot = new InMemoryParkingLot();

	final List<String> published = new ArrayList<>();

	final ReplayControl control = new ReplayControl();

	@Test
	void movesMatchingMessagesInPassesOfAtMostOneBatchAndDecidesAboutEachMessageOnce() {
		this.parkingLot.park("p1", "payments", "o1", "orders", "p2", "payments", "o2", "orders", "o3", "orders", "p3",
				"payments", "o4", "orders", "o5", "orders");

		ReplayResult result = run(ParkedMessageFilter.forQueue("orders"), null, 2);

		assertThat(this.published).containsExactly("o1", "o2", "o3", "o4", "o5");
		assertThat(result.moved()).isEqualTo(5);
		assertThat(result.scanned()).as("every message decided about once").isEqualTo(8);
		assertThat(this.parkingLot.passes).isEqualTo(3);
		assertThat(this.parkingLot.maxMovedInAPass).isEqualTo(2);
		assertThat(this.parkingLot.ids()).containsExactly("p1", "p2", "p3");
	}

	@Test
	void aStopEndsTheReplayBeforeItsNextPublishAndKeepsEverythingNotMoved() {
		this.parkingLot.park("o1", "orders", "o2", "orders", "o3", "orders", "o4", "orders");
		Replayer stoppingAfterTwo = (queue, properties, body) -> {
			this.published.add(properties.getMessageId());
			if (this.published.size() == 2) {
				this.control.stop();
			}
		};

		ReplayRun run = new ReplayRun(this.parkingLot::pass, stoppingAfterTwo, ParkedMessageFilter.ALL, null,
				new ReplaySettings(1_000_000, 1), this.control, RetryObservations.DISABLED,
				Clock.fixed(NOW, ZoneOffset.UTC));
		ReplayResult result = run.run();

		assertThat(result.moved()).isEqualTo(2);
		assertThat(run.stoppedBecause()).isEqualTo("stopped by an operator");
		assertThat(this.parkingLot.ids()).containsExactly("o3", "o4");
	}

	@Test
	void aBlockedBrokerStopsPublishingAndEveryRemainingMatchingMessageStaysWithThatReason() {
		this.parkingLot.park("o1", "orders", "p1", "payments", "o2", "orders", "o3", "orders", "o4", "orders");
		Replayer blockedAfterOne = (queue, properties, body) -> {
			if (!this.published.isEmpty()) {
				throw new ForwardFailedException(ForwardFailedException.Kind.BLOCKED,
						"RabbitMQ blocks publishing (low on memory)");
			}
			this.published.add(properties.getMessageId());
		};

		ReplayRun run = new ReplayRun(this.parkingLot::pass, blockedAfterOne, ParkedMessageFilter.forQueue("orders"),
				null, new ReplaySettings(1_000_000, 100), this.control, RetryObservations.DISABLED,
				Clock.fixed(NOW, ZoneOffset.UTC));
		ReplayResult result = run.run();

		assertThat(result.moved()).isEqualTo(1);
		assertThat(result.stayed()).isEqualTo(3);
		assertThat(result.stayedByReason()).containsExactly(Map.entry("broker-blocked", 3));
		assertThat(result.stayedMessages()).extracting(ReplayResult.StayedMessage::messageId)
			.containsExactly("o2", "o3", "o4");
		assertThat(result.stayedMessages().get(0).detail()).contains("low on memory");
		assertThat(run.stoppedBecause()).contains("low on memory");
		assertThat(this.parkingLot.ids()).containsExactly("p1", "o2", "o3", "o4");
	}

	@Test
	void theLimitCountsTheMessagesTriedAcrossPasses() {
		this.parkingLot.park("o1", "orders", "o2", "orders", "o3", "orders", "o4", "orders", "o5", "orders");

		ReplayResult result = run(ParkedMessageFilter.ALL, 3, 2);

		assertThat(result.moved()).isEqualTo(3);
		assertThat(this.parkingLot.ids()).containsExactly("o4", "o5");
	}

	@Test
	void aMessageThatThisReplayMovedAndThatWasParkedAgainEndsTheReplay() {
		this.parkingLot.park("o1", "orders", "o2", "orders");
		Replayer parkedAgainAtOnce = (queue, properties, body) -> {
			this.published.add(properties.getMessageId());
			this.parkingLot.parkLater(properties);
		};

		ReplayResult result = new ReplayRun(this.parkingLot::pass, parkedAgainAtOnce, ParkedMessageFilter.ALL, null,
				new ReplaySettings(1_000_000, 1), this.control, RetryObservations.DISABLED,
				Clock.fixed(NOW, ZoneOffset.UTC))
			.run();

		assertThat(result.moved()).isEqualTo(2);
		assertThat(this.published).containsExactly("o1", "o2");
	}

	private ReplayResult run(ParkedMessageFilter filter, Integer limit, int batchSize) {
		Replayer recording = (queue, properties, body) -> this.published.add(properties.getMessageId());
		return new ReplayRun(this.parkingLot::pass, recording, filter, limit, new ReplaySettings(1_000_000, batchSize),
				this.control, RetryObservations.DISABLED, Clock.fixed(NOW, ZoneOffset.UTC))
			.run();
	}

	/**
	 * A queue read with basic.get: what a pass keeps is, in order, at the head for the
	 * next pass.
	 */
	static final class InMemoryParkingLot {

		final List<GetResponse> messages = new ArrayList<>();

		final List<GetResponse> parkedDuringPass = new ArrayList<>();

		int passes;

		int maxMovedInAPass;

		long deliveryTag;

		void park(String... idsAndQueues) {
			for (int i = 0; i < idsAndQueues.length; i += 2) {
				Map<String, Object> headers = new LinkedHashMap<>();
				headers.put(RetryHeaders.QUEUE, idsAndQueues[i + 1]);
				headers.put(RetryHeaders.PARKED_REASON, "exhausted");
				this.messages.add(response(
						new AMQP.BasicProperties.Builder().messageId(idsAndQueues[i]).headers(headers).build()));
			}
		}

		void parkLater(AMQP.BasicProperties properties) {
			this.parkedDuringPass.add(response(properties));
		}

		ParkingLotScanner.Pass pass(long bound, ParkingLotScanner.Visitor visitor) {
			this.passes++;
			long depth = this.messages.size();
			long limit = Math.min(depth, bound);
			int count = 0;
			int moved = 0;
			int position = 0;
			boolean exhausted = false;
			while (visitor.wantsMore()) {
				if (count >= limit || position >= this.messages.size()) {
					exhausted = true;
					break;
				}
				count++;
				Decision decision = visitor.visit(this.messages.get(position));
				if (decision == Decision.REMOVE) {
					this.messages.remove(position);
					moved++;
				}
				else {
					position++;
					if (decision == Decision.KEEP_AND_STOP) {
						break;
					}
				}
			}
			this.maxMovedInAPass = Math.max(this.maxMovedInAPass, moved);
			this.messages.addAll(this.parkedDuringPass);
			this.parkedDuringPass.clear();
			return new ParkingLotScanner.Pass(depth, count, exhausted);
		}

		List<String> ids() {
			return this.messages.stream().map((message) -> message.getProps().getMessageId()).toList();
		}

		private GetResponse response(AMQP.BasicProperties properties) {
			return new GetResponse(new Envelope(++this.deliveryTag, false, "", "parking-lot"), properties, new byte[0],
					0);
		}

	}

}
