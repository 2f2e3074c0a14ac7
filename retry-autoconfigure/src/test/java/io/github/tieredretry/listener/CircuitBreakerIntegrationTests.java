package io.github.tieredretry.listener;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.tieredretry.annotation.Breaker;
import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.event.ListenerPausedEvent;
import io.github.tieredretry.event.ListenerResumedEvent;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.console.RetryOverview;
import io.github.tieredretry.internal.metrics.BreakerMetrics;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.Messages;
import io.github.tieredretry.testsupport.OutboundFrames;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.RecordingApplication;
import io.github.tieredretry.testsupport.TestQueues;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A downstream outage with and without a circuit breaker (issue #14): the same messages,
 * the same outage, two listeners, one with a breaker. With it, the listener pauses
 * instead of running every message through its retries: nothing is parked and every
 * message is processed once the downstream is back. Without it, the outage parks messages
 * that someone must replay.
 */
@SpringBootTest(classes = { RecordingApplication.class, OutboundFrames.Recording.class,
		CircuitBreakerIntegrationTests.LimitedQueue.class, CircuitBreakerIntegrationTests.Downstream.class,
		CircuitBreakerIntegrationTests.BreakerEvents.class, CircuitBreakerIntegrationTests.Listeners.class,
		CircuitBreakerIntegrationTests.LimitedListener.class })
@RabbitIntegrationTest
class CircuitBreakerIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("breaker")
		.settings((settings) -> settings.quorumTiers("317ms")
			.retries(2, "317ms")
			.breaker("defaults", 10, 5, "1s", 2)
			// Pauses at its first failure and probes one message every 100 ms.
			.breaker("probing", 1, 1, "100ms", 1));

	static final String PROTECTED = queues.name("protected");

	static final String UNPROTECTED = queues.name("unprotected");

	static final String LIMITED = queues.name("limited");

	static final int MESSAGES = 40;

	@Autowired
	InvocationRecorder recorder;

	@Autowired
	Downstream downstream;

	@Autowired
	LimitedListener limited;

	@Autowired
	BreakerEvents events;

	@Autowired
	RetryOverview overview;

	@Autowired
	MeterRegistry meters;

	@Autowired
	OutboundFrames frames;

	@Test
	void breakerPausesTheListenerThroughAnOutageSoThatNothingIsParkedWhileWithoutItTheOutageParksMessages() {
		this.downstream.down.set(true);
		List<String> protectedIds = new ArrayList<>();
		List<String> unprotectedIds = new ArrayList<>();
		for (int i = 0; i < MESSAGES; i++) {
			protectedIds.add(Messages.publish(queues.broker(), "", PROTECTED, "ok"));
			unprotectedIds.add(Messages.publish(queues.broker(), "", UNPROTECTED, "ok"));
		}
		await().atMost(Duration.ofSeconds(10)).until(() -> pausesOf("onProtected") > 0);
		assertThat(breaker().state()).isIn("open", "half-open");
		assertThat(this.meters.get(BreakerMetrics.STATE)
			.tag("listener", "CircuitBreakerIntegrationTests.Listeners#onProtected")
			.gauge()
			.value()).isIn(1.0, 2.0);
		// The outage outlasts every message's retries: without a breaker all of them are
		// parked, while the paused listener keeps probing.
		await().atMost(Duration.ofSeconds(30))
			.until(() -> queues.parkingLot().from(UNPROTECTED).size() == MESSAGES
					&& protectedIds.stream().mapToLong(this.recorder::count).sum() >= 10);
		this.downstream.down.set(false);

		await().atMost(Duration.ofSeconds(30)).until(() -> protectedIds.stream().allMatch(this.recorder::succeeded));
		await().atMost(Duration.ofSeconds(10)).until(() -> !this.events.resumed.isEmpty());
		long protectedParked = queues.parkingLot().from(PROTECTED).size();
		long unprotectedParked = queues.parkingLot().from(UNPROTECTED).size();
		long protectedAttempts = protectedIds.stream().mapToLong(this.recorder::count).sum();
		System.out.printf(
				"[breaker] outage of about 5 s, %d messages per listener: with a breaker %d parked, "
						+ "%d listener invocations; without %d parked%n",
				MESSAGES, protectedParked, protectedAttempts, unprotectedParked);
		assertThat(protectedParked).as("parked with a breaker").isZero();
		assertThat(unprotectedParked).as("parked without a breaker").isEqualTo(MESSAGES);
		assertThat(breaker().state()).isEqualTo("closed");
	}

	@Test
	void failedProbesOfAQuorumQueueMessageAreHeldNotReturnedSoItsDeliveryLimitIsNeverSpent() {
		this.limited.down.set(true);
		// No other listener of this application has a message while this one is probed:
		// every nack or reject sent from now on would be of the probed message.
		int mark = this.frames.mark();
		String id = Messages.publish(queues.broker(), "", LIMITED, "ok");

		// Probed far more often than the queue's delivery limit of 3 allows returns: a
		// failed probe given back to its queue would make RabbitMQ 4.0 to 4.2 drop it
		// after the third (every quorum queue there has a limit, 20 by default).
		await().atMost(Duration.ofSeconds(30)).until(() -> this.recorder.count(id) >= 10);
		this.limited.down.set(false);

		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(id));
		// Held by its consumer, as the frames on the wire show: RabbitMQ 4.3 does not
		// count a basic.nack(requeue), so x-delivery-count alone would not see one there.
		assertThat(this.frames.nacksAndRejectsSince(mark)).as("basic.nack and basic.reject sent while probing")
			.isEmpty();
		assertThat(this.limited.deliveryCounts).as("x-delivery-count of each attempt").containsOnly(0L);
		assertThat(queues.parkingLot().from(LIMITED)).isEmpty();
		await().atMost(Duration.ofSeconds(5)).until(() -> queues.broker().count(LIMITED) == 0);
	}

	@Test
	void operatorPausesAListenerUntilItsBreakerIsClosedAgain() {
		assertThat(this.overview.changeBreaker(PROTECTED, "open").state()).isEqualTo("forced-open");
		String id = Messages.publish(queues.broker(), "", PROTECTED, "ok");
		// No event stands for a listener that stays paused: the message must wait for as
		// long as the operator holds the breaker open.
		await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3)).until(() -> this.recorder.count(id) == 0);
		assertThat(this.overview.changeBreaker(PROTECTED, "closed").state()).isEqualTo("closed");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(id));
	}

	private long pausesOf(String method) {
		return this.events.paused.stream().filter((event) -> event.listener().endsWith("#" + method)).count();
	}

	private RetryOverview.Breaker breaker() {
		return this.overview.describe()
			.listeners()
			.stream()
			.filter((listener) -> listener.queues().contains(PROTECTED))
			.findFirst()
			.orElseThrow()
			.breaker();
	}

	/** The quorum queue with a delivery limit. */
	@Configuration(proxyBeanMethods = false)
	static class LimitedQueue {

		@Bean
		org.springframework.amqp.core.Queue limitedQueue() {
			// A quorum queue with a delivery limit, as RabbitMQ 4.0 gives every quorum
			// queue (20 there; 3 here, to see it sooner).
			return QueueBuilder.durable(LIMITED).quorum().deliveryLimit(3).build();
		}

	}

	/** A payment provider, say, that an outage takes down. */
	static class Downstream {

		final AtomicBoolean down = new AtomicBoolean();

		void call() {
			if (this.down.get()) {
				throw new IllegalStateException("downstream unavailable");
			}
		}

	}

	static class BreakerEvents {

		final List<ListenerPausedEvent> paused = new CopyOnWriteArrayList<>();

		final List<ListenerResumedEvent> resumed = new CopyOnWriteArrayList<>();

		@EventListener
		void onPaused(ListenerPausedEvent event) {
			this.paused.add(event);
		}

		@EventListener
		void onResumed(ListenerResumedEvent event) {
			this.resumed.add(event);
		}

	}

	static class Listeners {

		private final InvocationRecorder recorder;

		private final Downstream downstream;

		Listeners(InvocationRecorder recorder, Downstream downstream) {
			this.recorder = recorder;
			this.downstream = downstream;
		}

		@RabbitListener(queuesToDeclare = @Queue("${test.queues.protected}"))
		@RetryableListener(breaker = Breaker.ON)
		void onProtected(Message message) {
			call(message);
		}

		@RabbitListener(queuesToDeclare = @Queue("${test.queues.unprotected}"))
		@RetryableListener
		void onUnprotected(Message message) {
			call(message);
		}

		private void call(Message message) {
			String id = message.getMessageProperties().getMessageId();
			try {
				this.downstream.call();
				this.recorder.record(id, message.getMessageProperties().getRetryCount(), true);
			}
			catch (RuntimeException ex) {
				this.recorder.record(id, message.getMessageProperties().getRetryCount(), false);
				throw ex;
			}
		}

	}

	/**
	 * A listener whose downstream is down on its own, with a breaker that probes often.
	 */
	static class LimitedListener {

		final AtomicBoolean down = new AtomicBoolean();

		final List<Long> deliveryCounts = new CopyOnWriteArrayList<>();

		private final InvocationRecorder recorder;

		LimitedListener(InvocationRecorder recorder) {
			this.recorder = recorder;
		}

		@RabbitListener(queues = "${test.queues.limited}")
		@RetryableListener(policy = "probing", breaker = Breaker.ON)
		void onLimited(Message message) {
			MessageProperties properties = message.getMessageProperties();
			Object count = properties.getHeaders().get(RetryHeaders.BROKER_DELIVERY_COUNT);
			this.deliveryCounts.add((count instanceof Number number) ? number.longValue() : 0L);
			boolean success = !this.down.get();
			this.recorder.record(properties.getMessageId(), properties.getRetryCount(), success);
			if (!success) {
				throw new IllegalStateException("downstream unavailable");
			}
		}

	}

}
