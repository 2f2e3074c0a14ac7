package io.github.tieredretry.autoconfigure;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What the {@code retry.enabled=false} warning says a failing message does, on the broker
 * the test runs against, with Spring Boot's listener defaults: Spring AMQP requeues a
 * failed delivery with {@code basic.nack(requeue=true)}. From a classic queue it comes
 * back at once, over and over. A quorum queue on RabbitMQ 4.0 to 4.2 counts every requeue
 * and drops the message after its delivery limit (20 by default), 21 deliveries in all;
 * RabbitMQ 3.x has no default limit, and 4.3 no longer counts a {@code basic.nack}, so
 * there it comes back over and over too.
 */
@SpringBootTest
@RabbitIntegrationTest
class RetryDisabledIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("disabled");

	static final String CLASSIC = queues.name("classic");

	static final String QUORUM = queues.name("quorum");

	/** Far more deliveries than any delivery limit that applies by default. */
	static final int HOT_LOOP = 200;

	static {
		queues.settings((settings) -> settings.set("retry.enabled", "false")
			.set("test.classic", CLASSIC)
			.set("test.quorum", QUORUM)
			// Thousands of failures: the container's WARN per failure is not wanted here.
			.set("logging.level.org.springframework.amqp.rabbit.listener", "off"));
	}

	@Autowired
	RabbitTemplate rabbit;

	@Autowired
	FailingListeners listeners;

	@Test
	void failingMessageOfAClassicQueueIsRedeliveredInAHotLoop() {
		this.rabbit.convertAndSend(CLASSIC, "fail");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.listeners.classic.get() >= HOT_LOOP);
	}

	@Test
	void failingMessageOfAQuorumQueueLoopsOrIsDroppedAfterTheDeliveryLimitDependingOnTheBrokerVersion() {
		this.rabbit.convertAndSend(QUORUM, "fail");
		String version = String.valueOf(queues.broker().channel().getConnection().getServerProperties().get("version"));
		if (countsEveryRequeue(version)) {
			await().atMost(Duration.ofSeconds(10))
				.until(() -> this.listeners.quorumDeliveries("fail") == 21 && queues.broker().count(QUORUM) == 0);
			// A later message through the same queue: once it is delivered, a 22nd
			// delivery of the dropped one would have come first.
			this.rabbit.convertAndSend(QUORUM, "later");
			await().atMost(Duration.ofSeconds(10)).until(() -> this.listeners.quorumDeliveries("later") >= 1);
			assertThat(this.listeners.quorumDeliveries("fail")).as("deliveries on RabbitMQ %s", version).isEqualTo(21);
		}
		else {
			await().atMost(Duration.ofSeconds(10)).until(() -> this.listeners.quorumDeliveries("fail") >= HOT_LOOP);
		}
	}

	/**
	 * Whether a quorum queue of this broker counts a {@code basic.nack(requeue=true)}
	 * towards its delivery limit (20 by default since 4.0; 4.3 counts only
	 * {@code basic.reject}).
	 */
	private static boolean countsEveryRequeue(String version) {
		String[] parts = version.split("\\.");
		int major = Integer.parseInt(parts[0]);
		int minor = Integer.parseInt(parts[1]);
		return major == 4 && minor < 3;
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class Application {

		@Bean
		Queue classicQueue() {
			return new Queue(CLASSIC, true, false, false, Map.of("x-queue-type", "classic"));
		}

		@Bean
		Queue quorumQueue() {
			return new Queue(QUORUM, true, false, false, Map.of("x-queue-type", "quorum"));
		}

		@Bean
		FailingListeners failingListeners() {
			return new FailingListeners();
		}

	}

	static class FailingListeners {

		final AtomicInteger classic = new AtomicInteger();

		/** Deliveries from the quorum queue, by payload. */
		final Map<String, AtomicInteger> quorum = new ConcurrentHashMap<>();

		@RabbitListener(queues = "${test.classic}")
		@RetryableListener
		void onClassic(String message) {
			this.classic.incrementAndGet();
			throw new IllegalStateException("Downstream is down");
		}

		@RabbitListener(queues = "${test.quorum}")
		@RetryableListener
		void onQuorum(String message) {
			this.quorum.computeIfAbsent(message, (payload) -> new AtomicInteger()).incrementAndGet();
			throw new IllegalStateException("Downstream is down");
		}

		int quorumDeliveries(String message) {
			AtomicInteger deliveries = this.quorum.get(message);
			return (deliveries != null) ? deliveries.get() : 0;
		}

	}

}
