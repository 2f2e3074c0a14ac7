package io.github.tieredretry.internal.parkinglot;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import com.rabbitmq.client.GetResponse;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.forwarding.MessageForwarder;
import io.github.tieredretry.internal.topology.RetryTopology;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Moves this application's messages out of the shared parking lot
 * ({@link RetryTopology#SHARED_PARKING_LOT}, where earlier versions parked every
 * application's messages) into its own: those whose {@code retry-queue} header names the
 * queue of one of its listeners. Each is published to this application's parking lot with
 * its body and properties unchanged and leaves the shared one only once the broker
 * confirmed it (a crash in between leaves a copy in both, never none). Messages of other
 * applications, and messages that name no queue, stay where they are.
 * <p>
 * It runs once the application is ready and then every check interval, reading the shared
 * parking lot again only when its depth changed since a pass that moved nothing.
 */
public final class SharedParkingLotAdoption implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(SharedParkingLotAdoption.class);

	private final ParkingLotScanner shared;

	private final String parkingLot;

	private final MessageForwarder forwarder;

	private final Supplier<Set<String>> workQueues;

	private final Duration checkInterval;

	private final ScheduledExecutorService scheduler;

	private final AtomicBoolean started = new AtomicBoolean();

	// The shared parking lot's depth after a pass that moved nothing (-1: none yet).
	private volatile long unchangedDepth = -1;

	/**
	 * Create the adoption; {@link #start()} starts it.
	 * @param connectionFactory the connection factory to read the shared parking lot with
	 * @param parkingLot this application's parking lot
	 * @param forwarder publishes to this application's parking lot, confirmed
	 * @param workQueues the queues of this application's retryable listeners
	 * @param checkInterval how often the shared parking lot is looked at again
	 */
	public SharedParkingLotAdoption(ConnectionFactory connectionFactory, String parkingLot, MessageForwarder forwarder,
			Supplier<Set<String>> workQueues, Duration checkInterval) {
		if (checkInterval.isNegative() || checkInterval.isZero()) {
			throw new IllegalArgumentException("checkInterval must be positive but was " + checkInterval);
		}
		this.shared = new ParkingLotScanner(connectionFactory, RetryTopology.SHARED_PARKING_LOT);
		this.parkingLot = parkingLot;
		this.forwarder = forwarder;
		this.workQueues = workQueues;
		this.checkInterval = checkInterval;
		CustomizableThreadFactory threads = new CustomizableThreadFactory("tiered-retry-adoption-");
		threads.setDaemon(true);
		this.scheduler = Executors.newSingleThreadScheduledExecutor(threads);
	}

	/**
	 * Adopt now and then every check interval; nothing when this application parks in the
	 * shared parking lot itself, or when started already.
	 */
	public void start() {
		if (RetryTopology.SHARED_PARKING_LOT.equals(this.parkingLot) || !this.started.compareAndSet(false, true)) {
			return;
		}
		this.scheduler.scheduleWithFixedDelay(this::adoptLogged, 0, this.checkInterval.toMillis(),
				TimeUnit.MILLISECONDS);
	}

	/**
	 * Move this application's messages from the shared parking lot into its own, once, in
	 * the caller's thread.
	 * @return how many were moved
	 */
	public Adopted adopt() {
		Set<String> queues = this.workQueues.get();
		if (queues.isEmpty()) {
			return new Adopted(0, 0);
		}
		Mover mover = new Mover(queues);
		ParkingLotScanner.Pass pass = this.shared.pass(Long.MAX_VALUE, mover);
		if (mover.failure != null) {
			throw mover.failure;
		}
		this.unchangedDepth = (mover.moved == 0) ? pass.depth() : -1;
		Adopted adopted = new Adopted(mover.moved, pass.count() - mover.moved);
		if (adopted.moved() > 0) {
			logger.info("Moved " + adopted.moved() + " parked message(s) of this application's queues from the shared '"
					+ RetryTopology.SHARED_PARKING_LOT + "' into '" + this.parkingLot + "'; " + adopted.left()
					+ " of other applications stay there");
		}
		return adopted;
	}

	private void adoptLogged() {
		try {
			if (this.unchangedDepth >= 0 && this.shared.depth() == this.unchangedDepth) {
				return;
			}
			adopt();
		}
		catch (RuntimeException ex) {
			// Tried again at the next check: a broker that is away now may be back.
			logger.warn("Moving this application's messages from '" + RetryTopology.SHARED_PARKING_LOT + "' to '"
					+ this.parkingLot + "' failed; tried again in " + this.checkInterval + ": " + ex);
		}
	}

	/**
	 * Stop adopting.
	 */
	@Override
	public void close() {
		this.scheduler.shutdownNow();
	}

	/**
	 * What one adoption did.
	 *
	 * @param moved messages moved into this application's parking lot
	 * @param left messages looked at and left in the shared parking lot (other
	 * applications')
	 */
	public record Adopted(long moved, long left) {
	}

	private final class Mover implements ParkingLotScanner.Visitor {

		private final Set<String> queues;

		private long moved;

		private @Nullable RuntimeException failure;

		Mover(Set<String> queues) {
			this.queues = queues;
		}

		@Override
		public boolean wantsMore() {
			return this.failure == null;
		}

		@Override
		public ParkingLotScanner.Decision visit(GetResponse message) {
			Map<String, Object> headers = message.getProps().getHeaders();
			Object queue = (headers != null) ? headers.get(RetryHeaders.QUEUE) : null;
			if (queue == null || !this.queues.contains(queue.toString())) {
				return ParkingLotScanner.Decision.KEEP;
			}
			try {
				SharedParkingLotAdoption.this.forwarder.toQueue(SharedParkingLotAdoption.this.parkingLot,
						message.getProps(), message.getBody());
			}
			catch (RuntimeException ex) {
				this.failure = ex;
				return ParkingLotScanner.Decision.KEEP_AND_STOP;
			}
			this.moved++;
			return ParkingLotScanner.Decision.REMOVE;
		}

	}

}
