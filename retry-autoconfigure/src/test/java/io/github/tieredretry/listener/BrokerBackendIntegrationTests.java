package io.github.tieredretry.listener;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.tieredretry.annotation.Backend;
import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.event.RetryScheduledEvent;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.console.RetryOverview;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.Messages;
import io.github.tieredretry.testsupport.QuorumWorkQueue;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.RecordingApplication;
import io.github.tieredretry.testsupport.RetrySettings;
import io.github.tieredretry.testsupport.ScheduledRetries;
import io.github.tieredretry.testsupport.ScriptedListener;
import io.github.tieredretry.testsupport.TestApplications;
import io.github.tieredretry.testsupport.TestBroker;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The broker backend (#23) on every broker of the matrix: a listener on a quorum queue
 * whose delayed retry makes its policy's delays (here added by
 * {@code retry.broker.declare-queue-arguments}) runs on the broker from RabbitMQ 4.3 (no
 * forward, no tier; its retry count the broker's), and on the tiers before, saying why;
 * either way every message is retried at its policy's delays, never early, and parked
 * after its last retry with the same headers.
 */
@SpringBootTest(classes = { RecordingApplication.class, BrokerBackendIntegrationTests.QuorumQueues.class,
		BrokerBackendIntegrationTests.Listener.class, BrokerBackendIntegrationTests.PausedListener.class })
@RabbitIntegrationTest
class BrokerBackendIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("backend");

	static final TestQueues.Topology topology = queues.topology();

	static final String WORK = queues.name("work");

	static final String PAUSED = queues.name("paused");

	static final String RESTARTED = queues.name("restarted");

	static final String TYPED = queues.name("typed");

	static boolean onTheBroker;

	static {
		queues.settings((settings) -> settings.topology(topology)
			.set("retry.queue-type", "quorum")
			.brokerPolicy("linear", 3, "300ms, 600ms, 900ms")
			.set("retry.policies.linear.no-retry-on", IllegalArgumentException.class.getName())
			// Pauses at its first failure, probes one message every 300 ms.
			.brokerPolicy("paused", 3, "300ms, 600ms, 900ms")
			.set("retry.policies.paused.breaker.enabled", true)
			.breaker("paused", 1, 1, "300ms", 1));
	}

	@BeforeAll
	static void whichBackend() {
		onTheBroker = TestBroker.get().isAtLeast(4, 3);
	}

	@Autowired
	InvocationRecorder recorder;

	@Autowired
	ScheduledRetries scheduled;

	@Autowired
	RetryOverview overview;

	@Autowired
	ParkingLotService parkingLot;

	@Autowired
	PausedListener paused;

	@Test
	void theBackendThatRunsAndWhyAreShownForTheListener() {
		RetryOverview.Backend backend = this.overview.describe()
			.listeners()
			.stream()
			.filter((listener) -> listener.queues().contains(WORK))
			.findFirst()
			.orElseThrow()
			.backend();

		assertThat(backend.requested()).isEqualTo("auto");
		if (onTheBroker) {
			assertThat(backend.running()).isEqualTo("broker");
			assertThat(backend.reason()).contains("holds each retry in its queue")
				.contains("failed (min 300ms, max 900ms)");
		}
		else {
			assertThat(backend.running()).isEqualTo("tiers");
			assertThat(backend.reason()).contains("has no delayed retry (4.3 or later has)");
		}
	}

	@Test
	void failedMessageIsRetriedAtThePolicysDelaysNeverEarly() {
		String id = Messages.publish(queues.broker(), "", WORK, "fail-until-retry:2");

		await().atMost(Duration.ofSeconds(20)).until(() -> this.recorder.succeeded(id));
		assertThat(this.recorder.retryCounts(id)).containsExactly(0L, 1L, 2L);
		List<Duration> gaps = this.recorder.gaps(id);
		assertThat(gaps.get(0)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
		assertThat(gaps.get(1)).isGreaterThanOrEqualTo(Duration.ofMillis(600));
		assertThat(this.scheduled.of(id)).hasSize(2)
			.extracting(RetryScheduledEvent::tier)
			.allSatisfy((tier) -> assertThat(tier.equals("broker")).isEqualTo(onTheBroker));
		if (onTheBroker) {
			// The broker's count is the retry count the listener sees.
			assertThat(this.recorder.of(id).get(2).header(RetryHeaders.BROKER_DELIVERY_COUNT))
				.isInstanceOfSatisfying(Number.class, (count) -> assertThat(count.longValue()).isEqualTo(2));
		}
	}

	@Test
	void aDelayTheFailureChoosesWaitsInATierAndSoDoTheMessagesLaterRetriesNeverEarly() {
		// Retry 1 after the 800 ms the failure chose (no queue argument can make that
		// delay), retry 2 after the policy's 600 ms, then success.
		String id = Messages.publish(queues.broker(), "", WORK, "retry-after:800");

		await().atMost(Duration.ofSeconds(20)).until(() -> this.recorder.succeeded(id));
		assertThat(this.recorder.retryCounts(id)).containsExactly(0L, 1L, 2L);
		List<RetryScheduledEvent> retries = this.scheduled.of(id);
		assertThat(retries).extracting(RetryScheduledEvent::delay)
			.containsExactly(Duration.ofMillis(800), Duration.ofMillis(600));
		assertThat(this.recorder.of(id).get(1).at()).isAfterOrEqualTo(retries.get(0).due());
		assertThat(this.recorder.of(id).get(2).at()).isAfterOrEqualTo(retries.get(1).due());
		// Through the tiers, both: the queue's own count of the message starts again at
		// zero once it is back from a tier, and would hold retry 2 for the delay of retry
		// 1.
		assertThat(retries).extracting(RetryScheduledEvent::tier).doesNotContain("broker");
	}

	@Test
	void lastFailureIsParkedWithItsRetryCount() {
		String id = Messages.publish(queues.broker(), "", WORK, "always");

		BrokerClient.Received parked = queues.parkingLot(topology.parkingLot()).awaitSingle(id, Duration.ofSeconds(20));
		assertThat(parked.header(RetryHeaders.PARKED_REASON)).isEqualTo("exhausted");
		assertThat(parked.header(RetryHeaders.COUNT)).isEqualTo("3");
		assertThat(parked.header(RetryHeaders.QUEUE)).isEqualTo(WORK);
		assertThat(parked.properties().getHeaders()).containsKey(RetryHeaders.FIRST_FAILURE);
		assertThat(this.recorder.count(id)).isEqualTo(4);
	}

	@Test
	void failureNoRetryFixesIsParkedAtOnce() {
		String id = Messages.publish(queues.broker(), "", WORK, "reject");

		BrokerClient.Received parked = queues.parkingLot(topology.parkingLot()).awaitSingle(id, Duration.ofSeconds(10));
		assertThat(parked.header(RetryHeaders.PARKED_REASON)).isEqualTo("not-retryable");
		assertThat(parked.header(RetryHeaders.COUNT)).isEqualTo("0");
		assertThat(this.recorder.count(id)).isOne();
	}

	@Test
	void unconvertiblePayloadIsParkedAtOnceWithItsBodyUntouched() {
		String id = Messages.publish(queues.broker(), "", TYPED, "not a duration");

		BrokerClient.Received parked = queues.parkingLot(topology.parkingLot()).awaitSingle(id, Duration.ofSeconds(10));
		assertThat(parked.header(RetryHeaders.PARKED_REASON)).isEqualTo("not-retryable");
		assertThat(parked.header(RetryHeaders.QUEUE)).isEqualTo(TYPED);
		assertThat(parked.bodyText()).isEqualTo("not a duration");
		assertThat(this.overview.describe().listeners()).filteredOn((listener) -> listener.queues().contains(TYPED))
			.singleElement()
			.satisfies(
					(listener) -> assertThat(listener.backend().running()).isEqualTo(onTheBroker ? "broker" : "tiers"));
	}

	@Test
	void replayedMessageStartsAFreshRetryCycle() {
		// Fails its first attempt and its three retries, then succeeds.
		String id = Messages.publish(queues.broker(), "", WORK, "fail:4");
		await().atMost(Duration.ofSeconds(20)).until(() -> this.recorder.count(id) == 4);

		// Replayed once it is parked.
		await().atMost(Duration.ofSeconds(10)).until(() -> this.parkingLot.replay(WORK, null).moved() == 1);

		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(id));
		assertThat(this.recorder.of(id)).last().satisfies((replayed) -> assertThat(replayed.retryCount()).isZero());
	}

	@Test
	void pausedListenersFailedProbesSpendNoRetry() {
		this.paused.down = true;
		String id = Messages.publish(queues.broker(), "", PAUSED, "ok");

		// Its first failure is retry 1 and pauses the listener; the probes that follow
		// fail too, and are held: the broker's count stays at 1.
		await().atMost(Duration.ofSeconds(20)).until(() -> this.recorder.count(id) >= 8);
		this.paused.down = false;

		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(id));
		assertThat(this.recorder.of(id)).extracting(InvocationRecorder.Invocation::retryCount)
			.startsWith(0L)
			.last()
			.isEqualTo(1L);
		assertThat(this.recorder.of(id)).extracting(InvocationRecorder.Invocation::retryCount)
			.allSatisfy((retries) -> assertThat(retries).isLessThanOrEqualTo(1L));
		assertThat(queues.parkingLot(topology.parkingLot()).from(PAUSED)).isEmpty();
	}

	@Test
	void retryWaitingWhileTheApplicationStopsRunsWhenItIsBack() {
		Map<String, Object> properties = startupProperties(RESTARTED);
		properties.put("retry.defaults.delays", "1500ms");
		properties.put("retry.defaults.max-retries", "1");
		String id;
		try (ConfigurableApplicationContext first = TestApplications.run(Startups.RestartedApp.class, properties)) {
			id = Messages.publish(queues.broker(), "", RESTARTED, "fail-until-retry:1");
			InvocationRecorder firstRecorder = first.getBean(InvocationRecorder.class);
			await().atMost(Duration.ofSeconds(10)).until(() -> firstRecorder.count(id) == 1);
		}
		// Stopped while the retry waits: in the queue's delayed set (broker), or in a
		// tier.
		try (ConfigurableApplicationContext second = TestApplications.run(Startups.RestartedApp.class, properties)) {
			InvocationRecorder secondRecorder = second.getBean(InvocationRecorder.class);
			await().atMost(Duration.ofSeconds(15)).until(() -> secondRecorder.succeeded(id));
			assertThat(secondRecorder.of(id)).extracting(InvocationRecorder.Invocation::retryCount).containsExactly(1L);
		}
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void startupSaysHowTheTiersComposeTheDelaysOnlyWhereTheTiersRun(CapturedOutput output) {
		Map<String, Object> properties = startupProperties(queues.name("notices"));
		properties.put("retry.defaults.delays", "300ms, 600ms, 900ms");
		properties.put("retry.defaults.max-retries", "3");
		try (ConfigurableApplicationContext application = TestApplications.run(Startups.RestartedApp.class,
				properties)) {
			assertThat(output)
				.contains("Retries of BrokerBackendIntegrationTests.Startups.RestartedListener#onWork run on the "
						+ (onTheBroker ? "broker" : "tiers"));
			if (onTheBroker) {
				// The queue's delayed retry makes these delays exactly: no tier is
				// involved.
				assertThat(output).doesNotContain("RestartedListener#onWork: retr");
			}
			else {
				assertThat(output).contains("RestartedListener#onWork: retry 1 after 300ms goes through tiers");
			}
		}
	}

	@Test
	void askingForTheBrokerWhereItCannotMakeThePolicysDelaysFailsStartupWithTheFix() {
		Map<String, Object> properties = startupProperties(queues.name("exponential"));

		assertThatThrownBy(() -> TestApplications.run(Startups.ExponentialApp.class, properties).close())
			.hasStackTraceContaining("the backend asked for is broker, but the broker cannot hold its retries")
			.hasStackTraceContaining(onTheBroker ? "do not grow linearly" : "has no delayed retry")
			.hasStackTraceContaining("set the listener's backend to auto or tiers (@RetryableListener(backend = "
					+ "Backend.AUTO), retry.policies.<name>.backend or retry.defaults.backend)");
	}

	private static Map<String, Object> startupProperties(String workQueue) {
		return RetrySettings.application()
			.topology(topology)
			.set("retry.queue-type", "quorum")
			.set("retry.broker.declare-queue-arguments", true)
			.set("test.queues.work", workQueue)
			.toMap();
	}

	/** The listeners' queues, quorum queues whose delayed retry the starter declares. */
	@Configuration(proxyBeanMethods = false)
	static class QuorumQueues {

		@Bean
		Queue workQueue() {
			return QueueBuilder.durable(WORK).quorum().build();
		}

		@Bean
		Queue typedQueue() {
			return QueueBuilder.durable(TYPED).quorum().build();
		}

		@Bean
		Queue pausedQueue() {
			return QueueBuilder.durable(PAUSED).quorum().build();
		}

	}

	/**
	 * A listener whose downstream is down on its own, with a breaker that probes often.
	 */
	static class PausedListener {

		volatile boolean down;

		private final InvocationRecorder recorder;

		PausedListener(InvocationRecorder recorder) {
			this.recorder = recorder;
		}

		@RabbitListener(queues = "${test.queues.paused}")
		@RetryableListener(policy = "paused")
		void onPaused(Message message) {
			boolean failing = this.down;
			this.recorder.record(message, !failing);
			if (failing) {
				throw new IllegalStateException("downstream unavailable");
			}
		}

	}

	static class Listener extends ScriptedListener {

		Listener(InvocationRecorder recorder) {
			super(recorder);
		}

		@RabbitListener(queues = "${test.queues.work}")
		@RetryableListener(policy = "linear")
		void onWork(Message message) {
			run(message);
		}

		@RabbitListener(queues = "${test.queues.typed}")
		@RetryableListener(policy = "linear")
		void onTyped(Duration payload) {
			throw new IllegalStateException("never converted, never called");
		}

	}

	/** Applications started by a test on their own. */
	static class Startups {

		/** One listener on queue test.queues.work with the default policy. */
		@Configuration(proxyBeanMethods = false)
		@Import({ RecordingApplication.class, QuorumWorkQueue.class })
		static class RestartedApp {

			@Bean
			RestartedListener restartedListener(InvocationRecorder recorder) {
				return new RestartedListener(recorder);
			}

		}

		static class RestartedListener extends ScriptedListener {

			RestartedListener(InvocationRecorder recorder) {
				super(recorder);
			}

			@RabbitListener(queues = "${test.queues.work}")
			@RetryableListener
			void onWork(Message message) {
				run(message);
			}

		}

		/**
		 * Asks for the broker with the default exponential back-off (1s, 2s, 4s, ...).
		 */
		@SpringBootConfiguration
		@EnableAutoConfiguration
		@Import(QuorumWorkQueue.class)
		static class ExponentialApp {

			@Bean
			ExponentialListener exponentialListener() {
				return new ExponentialListener();
			}

		}

		static class ExponentialListener {

			@RabbitListener(queues = "${test.queues.work}")
			@RetryableListener(backend = Backend.BROKER)
			void onWork(Message message) {
			}

		}

	}

}
