package io.github.tieredretry.reliability.conditions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import io.github.tieredretry.testbrokers.HarnessBroker;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What happens to a retry that leaves its tier while its work queue is full
 * ({@code x-max-length}). The broker decides, not the starter: a classic tier
 * dead-letters at most once, so a work queue that refuses the retry
 * ({@code x-overflow: reject-publish}) makes the broker drop it; a quorum tier
 * dead-letters at least once and tries again until the work queue has room; a
 * {@code drop-head} work queue takes the retry and drops its oldest message instead,
 * whatever the tier type. Documented in docs/guarantees.md.
 * <p>
 * On a node of its own: the quorum case lowers how long the node's at-least-once
 * dead-letter worker waits before it tries again
 * ({@code dead_letter_worker_publisher_confirm_timeout}, 3 minutes by default).
 */
class BoundedWorkQueueIntegrationTests {

	static final String TIER = "retry.delay.2s";

	static final String WORK = "bounded.work";

	@Test
	void classicTierDropsARetryThatAFullRejectPublishWorkQueueRefuses() throws Exception {
		try (Scenario scenario = new Scenario("classic", "reject-publish")) {
			String retried = scenario.failOnceThenFillTheWorkQueue();
			// The tier's TTL runs out while the work queue is full: the broker drops the
			// retry.
			scenario.startListenersOnceTheRetryLeftTheTier();
			await().atMost(Duration.ofSeconds(10)).until(() -> scenario.app.deliveries().succeeded(scenario.filler));
			// A marker published now goes through the work queue after any copy of the
			// retry there, to the one consumer: once it succeeded, no copy came back.
			String marker = scenario.publish("ok");
			await().atMost(Duration.ofSeconds(10)).until(() -> scenario.app.deliveries().succeeded(marker));
			assertThat(scenario.app.deliveries().count(retried)).isOne();
			assertThat(scenario.channel.messageCount(Scenario.PARKING_LOT)).isZero();
		}
	}

	@Test
	void quorumTierKeepsARetryThatAFullRejectPublishWorkQueueRefusesUntilThereIsRoom() throws Exception {
		ConditionsBroker.setRabbitEnv("dead_letter_worker_publisher_confirm_timeout", "2000");
		try (Scenario scenario = new Scenario("quorum", "reject-publish")) {
			String retried = scenario.failOnceThenFillTheWorkQueue();
			// Its TTL ran out: the tier holds the retry for dead-lettering, the full work
			// queue still holds only the filler.
			await().atMost(Duration.ofSeconds(15)).until(() -> scenario.heldForDeadLettering(TIER) == 1);
			assertThat(scenario.channel.messageCount(TIER)).isZero();
			// And keeps holding it while the work queue refuses it again and again (the
			// dead-letter worker tries every 2 s here). Each look is a rabbitmqctl call,
			// which a busy machine slows down (seen taking most of a 15 s limit while two
			// other builds started and stopped nodes): hence the room beyond the 5 s.
			// No event marks a refused attempt of the dead-letter worker, so this is a
			// window: long enough for two of them.
			await().during(Duration.ofSeconds(5))
				.atMost(Duration.ofSeconds(40))
				.until(() -> scenario.heldForDeadLettering(TIER) == 1 && scenario.channel.messageCount(WORK) == 1);
			scenario.app.startListeners();
			await().atMost(Duration.ofSeconds(10)).until(() -> scenario.app.deliveries().succeeded(scenario.filler));
			// At-least-once dead-lettering tries again until the work queue takes it.
			await().atMost(Duration.ofSeconds(60)).until(() -> scenario.app.deliveries().succeeded(retried));
			assertThat(scenario.app.deliveries().of(retried).get(1).retryCount()).isEqualTo(1);
		}
		finally {
			ConditionsBroker.setRabbitEnv("dead_letter_worker_publisher_confirm_timeout", "180000");
		}
	}

	@Test
	void dropHeadWorkQueueTakesTheRetryAndDropsItsOldestMessage() throws Exception {
		try (Scenario scenario = new Scenario("quorum", "drop-head")) {
			String retried = scenario.failOnceThenFillTheWorkQueue();
			scenario.startListenersOnceTheRetryLeftTheTier();
			await().atMost(Duration.ofSeconds(10)).until(() -> scenario.app.deliveries().succeeded(retried));
			// The filler was in the work queue before the retry, and the one consumer
			// takes them in order: had it not been dropped, it would have come first.
			assertThat(scenario.app.deliveries().count(scenario.filler)).isZero();
		}
	}

	/**
	 * An application with one retryable listener on a work queue that holds at most one
	 * message.
	 */
	private static final class Scenario implements AutoCloseable {

		static final String PARKING_LOT = "bounded.parking-lot";

		final HarnessBroker broker;

		final String vhost;

		final HarnessApplication app;

		final Connection connection;

		final Channel channel;

		String filler = "";

		Scenario(String queueType, String overflow) throws Exception {
			this.broker = ConditionsBroker.get();
			this.vhost = ConditionsBroker.newVirtualHost("bounded-" + queueType + "-" + overflow);
			this.app = HarnessApplication.start(this.broker, this.vhost,
					Map.of("test.work", WORK, "test.work-max-length", 1, "test.work-overflow", overflow,
							"retry.queue-type", queueType, "retry.parking-lot", PARKING_LOT, "retry.tiers", "2s",
							"retry.defaults.max-retries", 1, "retry.defaults.delays", "2s"));
			this.connection = this.broker.connect(this.vhost, "bounded-work-test");
			this.channel = this.connection.createChannel();
			this.channel.confirmSelect();
		}

		/**
		 * A message fails once and waits in the tier; meanwhile the listener stops and
		 * another message fills the work queue.
		 */
		String failOnceThenFillTheWorkQueue() throws IOException {
			String retried = publish("fail:1");
			await().atMost(Duration.ofSeconds(10)).until(() -> this.channel.messageCount(TIER) == 1);
			this.app.stopListeners();
			this.filler = publish("ok");
			assertThat(this.channel.messageCount(WORK)).isOne();
			return retried;
		}

		/**
		 * Waits until the retry left the tier (its TTL ran out), then starts consuming.
		 */
		void startListenersOnceTheRetryLeftTheTier() {
			await().atMost(Duration.ofSeconds(15)).until(() -> this.channel.messageCount(TIER) == 0);
			this.app.startListeners();
		}

		/**
		 * Messages a quorum queue has dead-lettered (their TTL ran out) but still holds,
		 * because their target has not confirmed them yet (at-least-once dead-lettering).
		 * @param queue the quorum queue
		 * @return how many
		 */
		long heldForDeadLettering(String queue) {
			// rabbitmqctl list_queues does not offer messages_dlx; the queue's own info
			// does.
			String expression = String
				.format(Locale.ROOT,
						"{ok, Q} = rabbit_amqqueue:lookup(rabbit_misc:r(<<\"%s\">>, queue, <<\"%s\">>)), "
								+ "[{messages_dlx, N}] = rabbit_amqqueue:info(Q, [messages_dlx]), N.",
						this.vhost, queue);
			String output = this.broker.ctl("eval", expression).requireSuccess().output().strip();
			String count = output.substring(output.lastIndexOf('\n') + 1).strip();
			if (!count.matches("\\d+")) {
				throw new IllegalStateException("No messages_dlx for " + queue + " (not a quorum queue?): " + output);
			}
			return Long.parseLong(count);
		}

		private String publish(String script) throws IOException {
			String id = UUID.randomUUID().toString();
			this.channel.basicPublish("", WORK,
					new AMQP.BasicProperties.Builder().messageId(id).deliveryMode(2).build(),
					script.getBytes(StandardCharsets.UTF_8));
			try {
				this.channel.waitForConfirmsOrDie(10_000);
			}
			catch (InterruptedException | java.util.concurrent.TimeoutException ex) {
				throw new IOException(ex);
			}
			return id;
		}

		@Override
		public void close() throws Exception {
			this.app.close();
			this.connection.close();
		}

	}

}
