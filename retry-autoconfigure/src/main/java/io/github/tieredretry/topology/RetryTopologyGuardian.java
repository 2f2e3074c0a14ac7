package io.github.tieredretry.topology;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import com.rabbitmq.client.Channel;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.Exchange;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Checks every so often that the retry topology still exists on the broker, and declares it again (which
 * also restores bindings, which cannot be checked). Forwards heal a missing tier, parking lot or delay exchange themselves, but
 * nothing forwards to {@code retry.return}: if it were deleted, the broker would silently drop every retry
 * leaving a tier until the next reconnection. The check is a few passive declarations.
 */
public final class RetryTopologyGuardian implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(RetryTopologyGuardian.class);

	private final RetryTopology topology;

	private final RetryTopologyDeclarer declarer;

	private final ConnectionFactory connectionFactory;

	private final Duration interval;

	private @Nullable ScheduledExecutorService scheduler;

	/**
	 * Create a guardian.
	 * @param topology the topology to watch
	 * @param declarer declares it again
	 * @param connectionFactory the connection to check with
	 * @param interval time between checks; zero or negative disables the checks
	 */
	public RetryTopologyGuardian(RetryTopology topology, RetryTopologyDeclarer declarer,
			ConnectionFactory connectionFactory, Duration interval) {
		this.topology = topology;
		this.declarer = declarer;
		this.connectionFactory = connectionFactory;
		this.interval = interval;
	}

	/**
	 * Check the topology now and declare it again. Declaring is idempotent; it also restores a binding
	 * that was lost with a queue deleted and recreated by hand (without the binding from
	 * {@code retry.unroutable}, unroutable retries would be dropped).
	 * @return the exchanges and queues that were missing (empty when all exist or the broker cannot be reached)
	 */
	public List<String> checkNow() {
		List<String> missing;
		try {
			missing = missingObjects();
		}
		catch (RuntimeException ex) {
			logger.debug("Retry topology check skipped: " + ex.getMessage());
			return List.of();
		}
		if (!missing.isEmpty()) {
			logger.warn("Retry topology objects missing on the broker: " + missing + "; declaring them again");
		}
		try {
			this.declarer.declare();
		}
		catch (RuntimeException ex) {
			logger.warn("Could not declare the retry topology again: " + ex.getMessage());
		}
		return missing;
	}

	private List<String> missingObjects() {
		List<String> missing = new ArrayList<>();
		Connection connection = this.connectionFactory.createConnection();
		for (Exchange exchange : this.topology.exchanges()) {
			if (!exists(connection, (channel) -> channel.exchangeDeclarePassive(exchange.getName()))) {
				missing.add("exchange " + exchange.getName());
			}
		}
		for (Queue queue : this.topology.queues()) {
			if (!exists(connection, (channel) -> channel.queueDeclarePassive(queue.getName()))) {
				missing.add("queue " + queue.getName());
			}
		}
		return missing;
	}

	private static boolean exists(Connection connection, PassiveDeclaration declaration) {
		// A failed passive declaration closes the channel: one channel per check.
		Channel channel = connection.createChannel(false);
		try {
			declaration.declare(channel);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
		finally {
			try {
				channel.close();
			}
			catch (IOException | TimeoutException | RuntimeException ex) {
				// already closed by the failed declaration
			}
		}
	}

	@Override
	public void start() {
		if (this.interval.isNegative() || this.interval.isZero() || this.scheduler != null) {
			return;
		}
		ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor((runnable) -> {
			Thread thread = new Thread(runnable, "tiered-retry-topology-check");
			thread.setDaemon(true);
			return thread;
		});
		long millis = this.interval.toMillis();
		executor.scheduleWithFixedDelay(this::checkNow, millis, millis, TimeUnit.MILLISECONDS);
		this.scheduler = executor;
	}

	@Override
	public void stop() {
		ScheduledExecutorService executor = this.scheduler;
		if (executor != null) {
			executor.shutdownNow();
			this.scheduler = null;
		}
	}

	@Override
	public boolean isRunning() {
		return this.scheduler != null;
	}

	@Override
	public int getPhase() {
		return RetryTopologyInitializer.PHASE;
	}

	@FunctionalInterface
	private interface PassiveDeclaration {

		void declare(Channel channel) throws IOException;

	}

}
