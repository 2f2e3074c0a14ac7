package io.github.tieredretry.reliability.faultrun;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import io.github.tieredretry.testbrokers.HarnessBroker;

import static org.awaitility.Awaitility.await;

/**
 * Reads the run's parking lot for the accounting: either takes every copy out
 * ({@link #drain}), or looks at every copy and leaves them all parked ({@link #browse}:
 * {@code basic.get} without acknowledging, then the channel closes and the broker
 * requeues them), so that the parking lot can be replayed afterwards.
 */
final class ParkingLotReader {

	private final HarnessBroker broker;

	private final String vhost;

	private final String parkingLot;

	private final int messages;

	ParkingLotReader(HarnessBroker broker, String vhost, String parkingLot, int messages) {
		this.broker = broker;
		this.vhost = vhost;
		this.parkingLot = parkingLot;
		this.messages = messages;
	}

	/**
	 * Take every parked copy out of the parking lot.
	 * @return the copies
	 */
	List<ParkedCopy> drain() {
		return read(true);
	}

	/**
	 * Look at every parked copy and leave it parked. Nothing else may consume the parking
	 * lot meanwhile.
	 * @return the copies
	 */
	List<ParkedCopy> browse() {
		List<ParkedCopy> copies = read(false);
		// The broker requeues the copies after the channel closed: until it has, the
		// parking lot looks empty to anyone who reads it (such as a replay, which looks
		// at as many copies as it holds ready).
		await().atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(50))
			.until(() -> depth() >= copies.size());
		return copies;
	}

	/**
	 * How many copies are parked and ready, as the broker counts them now (a passive
	 * declare: exact, unlike the periodically refreshed counts of {@code list_queues} for
	 * quorum queues).
	 * @return the count
	 */
	long depth() {
		try (Connection connection = this.broker.connect(this.vhost, "fault-run-parking-lot-depth")) {
			return connection.createChannel().queueDeclarePassive(this.parkingLot).getMessageCount();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read the parking lot's depth", ex);
		}
	}

	private List<ParkedCopy> read(boolean take) {
		List<ParkedCopy> copies = new ArrayList<>();
		try (Connection connection = this.broker.connect(this.vhost, "fault-run-accounting")) {
			Channel channel = connection.createChannel();
			// Browsing holds every copy unacknowledged: bounded by the depth at the
			// start, so that copies requeued by nothing else are never seen twice.
			long depth = take ? Long.MAX_VALUE : channel.queueDeclarePassive(this.parkingLot).getMessageCount();
			GetResponse response;
			while (copies.size() < depth && (response = channel.basicGet(this.parkingLot, take)) != null) {
				copies.add(ParkedCopy.of(response.getProps(), this.messages));
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read the parking lot", ex);
		}
		return copies;
	}

}
