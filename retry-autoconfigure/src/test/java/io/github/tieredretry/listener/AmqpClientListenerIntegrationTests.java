package io.github.tieredretry.listener;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.event.RetryScheduledEvent;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.console.RetryOverview;
import io.github.tieredretry.testsupport.AmqpClientBeans;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.RecordingApplication;
import io.github.tieredretry.testsupport.RetrySettings;
import io.github.tieredretry.testsupport.ScheduledRetries;
import io.github.tieredretry.testsupport.ScriptedListener;
import io.github.tieredretry.testsupport.TestApplications;
import io.github.tieredretry.testsupport.TestBroker;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * {@code @RetryableListener} on a listener of Spring AMQP's RabbitMQ AMQP 1.0 client
 * (#23), on every broker of the matrix. On RabbitMQ 4.3 the quorum queue holds each retry
 * until the delivery time the starter gives the returned message: no tier, no republish,
 * the policy's delays (here not linear, which no queue argument could make) exactly, and
 * returns that never count towards the queue's delivery limit. On 4.0 the retries go
 * through the tiers. Before 4.0 the client cannot consume at all, and startup says so:
 * there every test of this class asserts that one refusal, one fact asserted six times
 * (the refusals that do not depend on the broker: AmqpClientListenerInstallationTests).
 */
@RabbitIntegrationTest
class AmqpClientListenerIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("amqp10");

	static final TestQueues.Topology topology = queues.topology();

	static final String WORK = queues.name("work");

	static final String TYPED = queues.name("typed");

	static ConfigurableApplicationContext application;

	// Before 4.0 the AMQP 1.0 client cannot consume: what every test asserts there,
	// instead of its own body, is that startup fails and says why.
	@RegisterExtension
	static final InvocationInterceptor refusedBefore40 = new InvocationInterceptor() {

		@Override
		public void interceptTestMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> test,
				ExtensionContext context) throws Throwable {
			if (application != null) {
				invocation.proceed();
			}
			else {
				invocation.skip();
				assertRefused();
			}
		}

	};

	@BeforeAll
	static void start() {
		if (TestBroker.get().isAtLeast(4, 0)) {
			application = TestApplications.run(App.class, properties());
		}
	}

	@AfterAll
	static void stop() {
		if (application != null) {
			application.close();
		}
		else {
			System.out.println("[amqp10] RabbitMQ " + TestBroker.get().version() + ": every test of this class "
					+ "asserted one fact, that a listener of the AMQP 1.0 client fails startup here");
		}
	}

	@Test
	void theBrokerHoldsTheRetriesFrom43AndTheTiersBefore() {
		RetryOverview.Backend backend = application.getBean(RetryOverview.class)
			.describe()
			.listeners()
			.stream()
			.filter((listener) -> listener.queues().contains(WORK))
			.findFirst()
			.orElseThrow()
			.backend();
		assertThat(backend.requested()).isEqualTo("auto");
		if (onTheBroker()) {
			assertThat(backend.running()).isEqualTo("broker");
			assertThat(backend.reason()).contains("until the delivery time the starter gives it");
		}
		else {
			assertThat(backend.running()).isEqualTo("tiers");
			assertThat(backend.reason()).contains("does not honour a delivery time");
		}
	}

	@Test
	void failedMessageIsRetriedAtThePolicysDelaysNeverEarlyAndPastTheDeliveryLimit() {
		String id = publish(WORK, "fail-until-retry:3");

		await().atMost(Duration.ofSeconds(30)).until(() -> recorder().succeeded(id));
		assertThat(recorder().retryCounts(id)).containsExactly(0L, 1L, 2L, 3L);
		// As over AMQP 0-9-1: the retry count and the queue in the message's properties.
		assertThat(recorder().of(id))
			.allSatisfy((invocation) -> assertThat(invocation.properties().getConsumerQueue()).isEqualTo(WORK));
		List<RetryScheduledEvent> retries = application.getBean(ScheduledRetries.class).of(id);
		assertThat(retries).extracting(RetryScheduledEvent::delay)
			.containsExactly(topology.shortTier(), topology.longTier(), topology.shortTier());
		for (int retry = 0; retry < 3; retry++) {
			assertThat(recorder().of(id).get(retry + 1).at()).isAfterOrEqualTo(retries.get(retry).due());
		}
		assertThat(retries).extracting(RetryScheduledEvent::tier)
			.allSatisfy((tier) -> assertThat(tier.equals("broker")).isEqualTo(onTheBroker()));
		// The queue's delivery limit is 1: three returns, none counted.
		assertThat(queues.parkingLot(topology.parkingLot()).from(WORK)).isEmpty();
	}

	@Test
	void aDelayTheFailureChoosesIsServedExactlyOnTheBrokerAndNeverEarlyThroughTheTiers() {
		// Retry 1 after the 1.7 s the failure chose, retry 2 after the policy's delay.
		String id = publish(WORK, "retry-after:1700");

		await().atMost(Duration.ofSeconds(30)).until(() -> recorder().succeeded(id));
		assertThat(recorder().retryCounts(id)).containsExactly(0L, 1L, 2L);
		List<RetryScheduledEvent> retries = application.getBean(ScheduledRetries.class).of(id);
		assertThat(retries).extracting(RetryScheduledEvent::delay)
			.containsExactly(Duration.ofMillis(1700), topology.longTier());
		Instant due = retries.get(0).due();
		Instant back = recorder().of(id).get(1).at();
		assertThat(back).isAfterOrEqualTo(due);
		if (onTheBroker()) {
			// The delivery time the starter gave it: exact, give or take the broker's
			// timer and the consumer.
			assertThat(retries.get(0).tier()).isEqualTo("broker");
			assertThat(Duration.between(due, back)).isLessThan(Duration.ofMillis(500));
		}
		else {
			assertThat(Duration.between(due, back)).isLessThan(topology.shortTier().plusSeconds(1));
		}
	}

	@Test
	void lastFailureIsParkedWithItsBodyPropertiesAndRetryCount() {
		String id = publish(WORK, "always");

		BrokerClient.Received parked = queues.parkingLot(topology.parkingLot()).awaitSingle(id, Duration.ofSeconds(30));
		assertThat(parked.header(RetryHeaders.PARKED_REASON)).isEqualTo("exhausted");
		assertThat(parked.header(RetryHeaders.COUNT)).isEqualTo("3");
		assertThat(parked.header(RetryHeaders.QUEUE)).isEqualTo(WORK);
		assertThat(parked.header(RetryHeaders.EXCEPTION)).isEqualTo(IllegalStateException.class.getName());
		assertThat(parked.bodyText()).isEqualTo("always");
		assertThat(parked.properties().getContentType()).isEqualTo("text/plain");
		assertThat(parked.properties().getCorrelationId()).isEqualTo("correlation-" + id);
		assertThat(parked.header("app-header")).isEqualTo("kept");
		assertThat(recorder().count(id)).isEqualTo(4);
	}

	@Test
	void failureNoRetryFixesIsParkedAtOnce() {
		String id = publish(WORK, "reject");

		BrokerClient.Received parked = queues.parkingLot(topology.parkingLot()).awaitSingle(id, Duration.ofSeconds(10));
		assertThat(parked.header(RetryHeaders.PARKED_REASON)).isEqualTo("not-retryable");
		assertThat(parked.header(RetryHeaders.COUNT)).isEqualTo("0");
		assertThat(recorder().count(id)).isOne();
		// Its one failure was classified once, as over AMQP 0-9-1.
		List<Throwable> classified = application.getBean(ClassifiedFailures.class).seen;
		assertThat(classified).filteredOn(IllegalArgumentException.class::isInstance).hasSize(1);
		assertThat(classified).doesNotHaveDuplicates();
	}

	@Test
	void unconvertiblePayloadIsParkedWithItsBodyUntouched() {
		String id = publish(TYPED, "not a number");

		BrokerClient.Received parked = queues.parkingLot(topology.parkingLot()).awaitSingle(id, Duration.ofSeconds(10));
		assertThat(parked.header(RetryHeaders.PARKED_REASON)).isEqualTo("not-retryable");
		assertThat(parked.header(RetryHeaders.QUEUE)).isEqualTo(TYPED);
		assertThat(parked.bodyText()).isEqualTo("not a number");
	}

	@Test
	void listenerThatAsksForAnAckOrARequeueByThrowingGetsItAsFromAContainerOfAmqp091() {
		String acked = publish(WORK, "ack-now");
		String requeued = publish(WORK, "requeue-once");

		await().atMost(Duration.ofSeconds(10)).until(() -> recorder().succeeded(requeued));
		// Requeued, not retried: invoked again with no retry spent, nothing scheduled.
		assertThat(recorder().retryCounts(requeued)).containsExactly(0L, 0L);
		assertThat(application.getBean(ScheduledRetries.class).of(requeued)).isEmpty();
		// Acked on the listener's word: once, neither retried nor parked.
		String after = publish(WORK, "ok");
		await().atMost(Duration.ofSeconds(10)).until(() -> recorder().succeeded(after));
		assertThat(recorder().count(acked)).isOne();
		assertThat(application.getBean(ScheduledRetries.class).of(acked)).isEmpty();
		assertThat(queues.parkingLot(topology.parkingLot()).from(WORK)).noneMatch((parked) -> {
			String id = parked.properties().getMessageId();
			return acked.equals(id) || requeued.equals(id);
		});
	}

	private static boolean onTheBroker() {
		return TestBroker.get().isAtLeast(4, 3);
	}

	private static void assertRefused() {
		assertThat(TestBroker.get().isAtLeast(4, 0)).as("the application started on RabbitMQ 4.0 or later").isFalse();
		assertThatThrownBy(() -> TestApplications.run(App.class, properties()).close())
			.hasStackTraceContaining("uses the RabbitMQ AMQP 1.0 client, which needs RabbitMQ 4.0 or later, and "
					+ "the broker is RabbitMQ " + TestBroker.get().version())
			.hasStackTraceContaining("give this listener an AMQP 0-9-1 container factory");
	}

	private static InvocationRecorder recorder() {
		return application.getBean(InvocationRecorder.class);
	}

	// Published over AMQP 0-9-1, with properties the parked copy must keep.
	private static String publish(String queue, String script) {
		String id = script.replace(' ', '-') + "-" + UUID.randomUUID();
		AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().messageId(id)
			.correlationId("correlation-" + id)
			.contentType("text/plain")
			.deliveryMode(2)
			.headers(Map.of("app-header", "kept"))
			.build();
		queues.broker().publish("", queue, properties, script.getBytes(StandardCharsets.UTF_8));
		return id;
	}

	private static Map<String, Object> properties() {
		// Not linear: only a delivery time per message makes these on the broker.
		String delays = topology.tiers() + ", " + topology.shortTier().toMillis() + "ms";
		return RetrySettings.application()
			.topology(topology)
			.retries(3, delays)
			.set("retry.defaults.no-retry-on", IllegalArgumentException.class.getName())
			.set("test.work", WORK)
			.set("test.typed", TYPED)
			.toMap();
	}

	/**
	 * What an application of the AMQP 1.0 client declares itself (Spring Boot 4.1
	 * auto-configures none of it), from Boot's connection details.
	 */
	@Configuration(proxyBeanMethods = false)
	@Import({ RecordingApplication.class, AmqpClientBeans.class })
	static class App {

		@Bean
		ClassifiedFailures classifiedFailures() {
			return new ClassifiedFailures();
		}

		@Bean
		Queue workQueue() {
			// Returns counted towards this limit would dead-letter (drop) a message on
			// its second failure.
			return QueueBuilder.durable(WORK).quorum().deliveryLimit(1).build();
		}

		@Bean
		Queue typedQueue() {
			return QueueBuilder.durable(TYPED).quorum().build();
		}

		@Bean
		Listener listener(InvocationRecorder recorder) {
			return new Listener(recorder);
		}

	}

	/** Every failure the starter asked the application to classify. */
	static class ClassifiedFailures implements RetryFailureClassifier {

		final List<Throwable> seen = new CopyOnWriteArrayList<>();

		@Override
		public Classification classify(RetryableListenerInfo listener, Throwable failure) {
			this.seen.add(failure);
			return Classification.UNDECIDED;
		}

	}

	static class Listener extends ScriptedListener {

		Listener(InvocationRecorder recorder) {
			super(recorder);
		}

		@RabbitListener(queues = "${test.work}", containerFactory = "amqpContainerFactory")
		@RetryableListener
		void onWork(Message message) {
			run(message);
		}

		@RabbitListener(queues = "${test.typed}", containerFactory = "amqpContainerFactory")
		@RetryableListener
		void onTyped(Duration payload) {
			throw new IllegalStateException("never converted, never called");
		}

	}

}
