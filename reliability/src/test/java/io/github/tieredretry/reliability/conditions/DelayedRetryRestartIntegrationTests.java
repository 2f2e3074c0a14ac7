package io.github.tieredretry.reliability.conditions;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import io.github.tieredretry.testbrokers.HarnessBroker;
import io.github.tieredretry.testbrokers.HarnessBrokers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * RabbitMQ 4.3's delayed retry across node restarts: a quorum queue keeps the time each
 * delayed message is due (absolute, in its replicated state), so a restart neither loses
 * nor restarts a delay, and a message whose delay ended while the node was down is
 * delivered as soon as it is back. On a node of its own, which the tests restart; before
 * 4.3 (the machine's 3.10 when no {@code -Drabbitmq.version} is given) the broker ignores
 * the arguments and there is no delay to keep. docs/delayed-retry.md states these facts
 * and links here.
 */
class DelayedRetryRestartIntegrationTests {

	static final Duration GRANULARITY = Duration.ofMillis(5);

	static final Duration LATENESS = Duration.ofSeconds(1);

	static final int MESSAGES = 3;

	static final String KEPT = "kept";

	/** Long enough for both restarts on a loaded machine, with room to spare. */
	static final Duration KEPT_DELAY = Duration.ofSeconds(45);

	static final String ENDED = "ended-while-down";

	static final Duration ENDED_DELAY = Duration.ofSeconds(2);

	static HarnessBroker broker;

	static boolean delayedRetry;

	@BeforeAll
	static void startNode() {
		Path work = Path.of(System.getProperty("reliability.work-dir", "target/fault-run"))
			.resolve("delayed-retry")
			.toAbsolutePath();
		broker = HarnessBrokers.start(work);
		try (Connection connection = broker.connect("/", "version")) {
			delayedRetry = ConditionsBroker.hasDelayedRetry(connection);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
		if (delayedRetry) {
			// A quorum queue declared seconds before a SIGKILL comes back empty ("member
			// not found ... starting as a new one"): the node has not saved its Ra member
			// yet. A clean restart saves it; that is not what these tests are about.
			declare(KEPT, KEPT_DELAY);
			declare(ENDED, ENDED_DELAY);
			broker.restartApplication();
		}
	}

	@AfterAll
	static void stopNode() {
		if (broker != null) {
			broker.close();
		}
	}

	@Test
	void delayIsKeptAcrossARestartOfTheApplicationAndACrashOfTheNode() throws Exception {
		Duration delay = KEPT_DELAY;
		long returned = giveBackDelayed(KEPT, delay);
		if (!delayedRetry) {
			assertBackAtOnce(KEPT, delay);
			return;
		}

		broker.restartApplication();
		broker.crashAndRestart();
		long restarted = System.currentTimeMillis();
		assertThat(restarted)
			.as("both restarts done, %d s before the delay ends", (returned + delay.toMillis() - restarted) / 1000)
			.isLessThan(returned + delay.toMillis() - 5000);

		try (Connection connection = broker.connect("/", "after-restarts")) {
			Arrivals arrivals = consume(connection, KEPT);
			for (int i = 1; i <= MESSAGES; i++) {
				// Not a delay counted again from either restart.
				assertThat(arrivals.arrival(i, delay.plusSeconds(30)).epochMillis()).as("arrived, in epoch ms")
					.isBetween(returned + delay.minus(GRANULARITY).toMillis(),
							returned + delay.plus(LATENESS).toMillis());
			}
		}
	}

	@Test
	void messageWhoseDelayEndedWhileTheNodeWasDownIsDeliveredAsSoonAsItIsBack() throws Exception {
		Duration delay = ENDED_DELAY;
		long returned = giveBackDelayed(ENDED, delay);
		if (!delayedRetry) {
			assertBackAtOnce(ENDED, delay);
			return;
		}

		broker.crashAndRestart();
		assertThat(System.currentTimeMillis()).as("still down when the delay ended")
			.isGreaterThan(returned + delay.toMillis());

		try (Connection connection = broker.connect("/", "after-crash")) {
			Channel channel = connection.createChannel();
			channel.basicQos(10);
			Arrivals arrivals = new Arrivals(channel);
			long consuming = System.nanoTime();
			channel.basicConsume(ENDED, false, arrivals);
			for (int i = 1; i <= MESSAGES; i++) {
				assertThat(arrivals.arrival(i, Duration.ofSeconds(30)).since(consuming)).isLessThan(LATENESS);
			}
		}
	}

	/**
	 * Declare a quorum queue with a constant delay, publish messages to it and give them
	 * back with {@code basic.reject}, so that each waits for the delay.
	 * @param queue the queue
	 * @param delay the delay
	 * @return when they were given back, in epoch milliseconds
	 */
	private long giveBackDelayed(String queue, Duration delay) throws Exception {
		declare(queue, delay);
		try (Connection connection = broker.connect("/", "give-back")) {
			return GiveBack.rejectAll(connection.createChannel(), queue, MESSAGES, delayedRetry);
		}
	}

	private static void declare(String queue, Duration delay) {
		try (Connection connection = broker.connect("/", "declare"); Channel channel = connection.createChannel()) {
			channel.queueDeclare(queue, true, false, false, Map.of("x-queue-type", "quorum", "x-delayed-retry-type",
					"all", "x-delayed-retry-min", delay.toMillis(), "x-delayed-retry-max", delay.toMillis()));
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private void assertBackAtOnce(String queue, Duration delay) throws Exception {
		try (Connection connection = broker.connect("/", "no-delay")) {
			Channel channel = connection.createChannel();
			await().atMost(delay.minus(GRANULARITY))
				.until(() -> channel.queueDeclarePassive(queue).getMessageCount() == MESSAGES);
			channel.queueDelete(queue);
		}
	}

	private Arrivals consume(Connection connection, String queue) throws Exception {
		Channel channel = connection.createChannel();
		channel.basicQos(10);
		Arrivals arrivals = new Arrivals(channel);
		channel.basicConsume(queue, false, arrivals);
		return arrivals;
	}

}
