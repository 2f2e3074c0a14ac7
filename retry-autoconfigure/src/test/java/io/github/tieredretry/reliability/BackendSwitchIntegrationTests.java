package io.github.tieredretry.reliability;

import java.util.LinkedHashMap;
import java.util.Map;

import io.github.tieredretry.annotation.Backend;
import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.internal.install.RetryBackends;
import io.github.tieredretry.listener.ListenerBackend;
import io.github.tieredretry.policy.BackendChoice;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.TestApplications;
import io.github.tieredretry.testsupport.TestBroker;
import io.github.tieredretry.testsupport.TestQueues;
import io.github.tieredretry.testsupport.TopologyProperties;
import org.assertj.core.api.AbstractCharSequenceAssert;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Changing a listener's backend on a work queue that exists (#30): a queue's arguments
 * never change, and from RabbitMQ 4.3 the delayed-retry arguments are compared on every
 * declaration, so a start that declares the queue with other ones fails. It must say so
 * as what it is (the queue, the argument, what the queue has and what this start
 * declares, the backend chosen and why, commands that the running broker accepts), never
 * as a conflict of the retry topology, and declare nothing meanwhile: the next start with
 * the configuration that declared the queue works, and the queue is as it was. 3.10 and
 * 4.0 accept and ignore the delayed-retry arguments on any declaration: the same restarts
 * work there, on the tiers.
 */
@ExtendWith(OutputCaptureExtension.class)
class BackendSwitchIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("switch");

	static final TestQueues.Topology topology = queues.topology();

	/** What the broker backend declares for the policy's delays 1s, 2s, 3s. */
	static final Map<String, Object> WITH_DELAYED_RETRY = Map.of("x-queue-type", "quorum", "x-delayed-retry-type",
			"failed", "x-delayed-retry-min", 1000, "x-delayed-retry-max", 3000);

	static final Map<String, Object> WITHOUT_DELAYED_RETRY = Map.of("x-queue-type", "quorum");

	static final String NOT_A_TOPOLOGY_CONFLICT = "of the retry topology already exist";

	static boolean delayedRetry;

	static String version;

	@BeforeAll
	static void broker() {
		delayedRetry = TestBroker.get().isAtLeast(4, 3);
		version = TestBroker.get().version();
	}

	@Test
	void restartOnTheTiersOfAQueueDeclaredForTheBrokerIsExplainedAndChangesNothing(CapturedOutput output) {
		String queue = queues.name("broker-to-tiers");
		Map<String, Object> onTheBroker = linear(queue);
		run(onTheBroker).close();
		Map<String, Object> onTheTiers = with(onTheBroker, "retry.defaults.backend", "tiers");

		if (delayedRetry) {
			assertRefusedAsAQueueArgumentsConflict(onTheTiers, output, queue)
				.contains("Queue '" + queue + "' on virtual host '/' exists with other arguments than this "
						+ "application declares")
				.contains("argument 'x-delayed-retry-type': the queue has 'failed'; this application declares none")
				.contains("SwitchListener#onWork (backend tiers asked for) would run its retries on the tiers: "
						+ "the backend asked for is tiers")
				.contains("declares the queue with {x-queue-type=quorum}")
				.contains("This application declared nothing");
			assertFixForQuorumQueue(output, queue, "broker-to-tiers");
			assertUnchangedAndTheOriginalStartWorks(queue, WITH_DELAYED_RETRY, onTheBroker, Backend.BROKER);
		}
		else {
			assertThat(startsOnTheTiers(onTheTiers, output).reason()).isEqualTo("the backend asked for is tiers");
		}
	}

	@Test
	void restartWithDelaysTheBrokerCannotMakeOnAQueueDeclaredForTheBrokerIsExplainedAndChangesNothing(
			CapturedOutput output) {
		String queue = queues.name("not-linear");
		Map<String, Object> onTheBroker = linear(queue);
		run(onTheBroker).close();
		Map<String, Object> notLinear = with(onTheBroker, "retry.defaults.delays", "1s, 5s, 30s");

		if (delayedRetry) {
			assertRefusedAsAQueueArgumentsConflict(notLinear, output, queue)
				.contains("argument 'x-delayed-retry-type': the queue has 'failed'; this application declares none")
				.contains("SwitchListener#onWork (backend auto asked for) would run its retries on the tiers: "
						+ "the backend asked for is auto and the broker cannot hold its retries: its delays "
						+ "[1s, 5s, 30s] do " + "not grow linearly");
			assertFixForQuorumQueue(output, queue, "broker-to-tiers");
			assertUnchangedAndTheOriginalStartWorks(queue, WITH_DELAYED_RETRY, onTheBroker, Backend.BROKER);
		}
		else {
			startsOnTheTiers(notLinear, output);
		}
	}

	@Test
	void declaringTheArgumentsOfAQueueThatExistsWithoutThemIsExplainedAndChangesNothing(CapturedOutput output) {
		String queue = queues.name("tiers-to-broker");
		Map<String, Object> onTheTiers = with(linear(queue), "retry.broker.declare-queue-arguments", "false");
		run(onTheTiers).close();
		Map<String, Object> withArguments = with(onTheTiers, "retry.broker.declare-queue-arguments", "true");

		if (delayedRetry) {
			assertRefusedAsAQueueArgumentsConflict(withArguments, output, queue)
				.contains("argument 'x-delayed-retry-type': the queue has none; this application declares 'failed'")
				.contains(
						"SwitchListener#onWork (backend auto asked for) would run its retries on the broker: RabbitMQ "
								+ version + " holds each retry in its queue")
				.contains("x-delayed-retry-max=3000, x-delayed-retry-min=1000, x-delayed-retry-type=failed")
				.contains("retry.broker.declare-queue-arguments=false");
			assertFixForQuorumQueue(output, queue, "tiers-to-broker");
			assertUnchangedAndTheOriginalStartWorks(queue, WITHOUT_DELAYED_RETRY, onTheTiers, Backend.TIERS);
		}
		else {
			assertThat(startsOnTheTiers(withArguments, output).reason())
				.contains("has no delayed retry (4.3 or later has)");
		}
	}

	@Test
	void startThatAsksForTheBrokerAndCannotHaveItDeclaresNoQueueSoTheCorrectedStartWorks(CapturedOutput output) {
		String queue = queues.name("broker-refused");
		Map<String, Object> corrected = linear(queue);
		Map<String, Object> refused = with(with(corrected, "retry.defaults.backend", "broker"), "retry.defaults.delays",
				"1s, 5s, 30s");

		assertThatException().isThrownBy(() -> run(refused).close())
			.satisfies((failure) -> assertThat(failure)
				.hasStackTraceContaining("the backend asked for is broker, but the broker cannot hold its retries")
				.hasStackTraceContaining(delayedRetry ? "do not grow linearly" : "has no delayed retry"));
		assertThat(output).doesNotContain(NOT_A_TOPOLOGY_CONFLICT);
		try (BrokerClient broker = new BrokerClient()) {
			assertThat(broker.queueExists(queue)).as("queue declared by the failed start").isFalse();
		}

		try (ConfigurableApplicationContext context = run(corrected)) {
			assertThat(choice(context).backend()).isEqualTo(delayedRetry ? Backend.BROKER : Backend.TIERS);
		}
		try (BrokerClient broker = new BrokerClient()) {
			assertThat(broker.declaresEquivalently(queue, WITH_DELAYED_RETRY)).isTrue();
		}
	}

	@Test
	void applicationsOtherQueueThatExistsWithOtherArgumentsIsNotReportedAsPartOfTheRetryTopology(
			CapturedOutput output) {
		String other = queues.name("other");
		queues.broker().declareQueue(other);
		Map<String, Object> properties = with(linear(queues.name("beside-other")), "test.other", other);

		// Not a retryable listener's: the admin declares it, and the broker's refusal
		// says what it is.
		assertThatException().isThrownBy(() -> TestApplications.run(AppWithAnotherQueue.class, properties).close())
			.satisfies((failure) -> assertThat(failure)
				.hasStackTraceContaining("inequivalent arg 'x-max-length' for queue '" + other + "'"));
		assertThat(output).doesNotContain(NOT_A_TOPOLOGY_CONFLICT);
		assertThat(queues.broker().declaresEquivalently(other, Map.of())).isTrue();
	}

	/**
	 * Asserts that a start fails from 4.3 as the queue's arguments conflict with what it
	 * declares, and says so.
	 * @param properties the start's properties
	 * @param output the output
	 * @param queue the work queue
	 * @return an assertion on the output, to assert more of what it says
	 */
	private static AbstractCharSequenceAssert<?, ?> assertRefusedAsAQueueArgumentsConflict(
			Map<String, Object> properties, CapturedOutput output, String queue) {
		assertThatException().isThrownBy(() -> run(properties).close())
			.satisfies((failure) -> assertThat(failure).hasStackTraceContaining("QueueArgumentsConflictException"));
		return assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Queue '" + queue + "' on virtual host '/' exists with other arguments");
	}

	/**
	 * Asserts that a start works before 4.3, on the tiers (the delayed-retry arguments
	 * are accepted and ignored there).
	 * @param properties the start's properties
	 * @param output the output
	 * @return how the backend was chosen
	 */
	private static BackendChoice startsOnTheTiers(Map<String, Object> properties, CapturedOutput output) {
		BackendChoice choice;
		try (ConfigurableApplicationContext context = run(properties)) {
			choice = choice(context);
		}
		assertThat(choice.backend()).isEqualTo(Backend.TIERS);
		assertThat(output).doesNotContain("APPLICATION FAILED TO START");
		return choice;
	}

	private static void assertFixForQuorumQueue(CapturedOutput output, String queue, String migration) {
		assertThat(output).contains("rabbitmqctl list_queues -p / name messages")
			.contains("rabbitmqctl delete_queue -p / " + queue + System.lineSeparator())
			.contains("docs/migration.md, \""
					+ (migration.equals("broker-to-tiers") ? "broker → tiers" : "tiers → broker"))
			.doesNotContain("--if-empty")
			.doesNotContain(NOT_A_TOPOLOGY_CONFLICT);
	}

	private static void assertUnchangedAndTheOriginalStartWorks(String queue, Map<String, Object> arguments,
			Map<String, Object> original, Backend originalBackend) {
		try (BrokerClient broker = new BrokerClient()) {
			assertThat(broker.declaresEquivalently(queue, arguments)).as("the queue's arguments, unchanged").isTrue();
		}
		try (ConfigurableApplicationContext context = run(original)) {
			assertThat(choice(context).backend()).isEqualTo(originalBackend);
		}
	}

	private static BackendChoice choice(ConfigurableApplicationContext context) {
		ListenerBackend backend = context.getBean(RetryBackends.class).backends().get(0);
		assertThat(backend.choice()).isNotNull();
		return backend.choice();
	}

	/**
	 * A listener on a quorum queue the application declares, with delays the broker makes
	 * (1s, 2s, 3s), on the backend {@code auto}, with
	 * {@code retry.broker.declare-queue-arguments}.
	 */
	private static Map<String, Object> linear(String queue) {
		Map<String, Object> properties = TopologyProperties.retrying(topology, queue, 3);
		properties.putAll(TestApplications.brokerProperties());
		properties.put("spring.main.web-application-type", "none");
		properties.put("retry.queue-type", "quorum");
		properties.put("retry.defaults.delays", "1s, 2s, 3s");
		properties.put("retry.broker.declare-queue-arguments", "true");
		return properties;
	}

	private static Map<String, Object> with(Map<String, Object> properties, String key, String value) {
		Map<String, Object> changed = new LinkedHashMap<>(properties);
		changed.put(key, value);
		return changed;
	}

	private static ConfigurableApplicationContext run(Map<String, Object> properties) {
		return TestApplications.run(App.class, properties);
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		Queue workQueue(Environment environment) {
			return QueueBuilder.durable(environment.getRequiredProperty("test.work")).quorum().build();
		}

		@Bean
		SwitchListener switchListener() {
			return new SwitchListener();
		}

	}

	/** With a queue of its own that no retryable listener consumes. */
	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class AppWithAnotherQueue extends App {

		@Bean
		Queue otherQueue(Environment environment) {
			return QueueBuilder.durable(environment.getRequiredProperty("test.other")).maxLength(10).build();
		}

	}

	static class SwitchListener {

		@RabbitListener(queues = "${test.work}")
		@RetryableListener
		void onWork(Message message) {
		}

	}

}
