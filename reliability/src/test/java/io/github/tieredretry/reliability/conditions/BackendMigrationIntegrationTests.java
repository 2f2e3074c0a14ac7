package io.github.tieredretry.reliability.conditions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import io.github.tieredretry.annotation.Backend;
import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.install.RetryBackends;
import io.github.tieredretry.policy.BackendChoice;
import io.github.tieredretry.testbrokers.CommandResult;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.Script;
import io.github.tieredretry.testsupport.TestApplications;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

/**
 * The procedures of docs/migration.md, "broker → tiers" and "tiers → broker", step by
 * step as written there, with its {@code rabbitmqctl} commands: stop the producers; let
 * the application consume until {@code list_queues} shows no message in the work queue;
 * stop it, and look again once the tiers are empty and the queue's figures are fresh;
 * then {@code delete_queue} (without {@code --if-empty}, which RabbitMQ 4.3 refuses for
 * quorum queues) and start it with the other backend. Every message is processed, before
 * and after, none is parked, and the new start runs on the backend it asked for. On 3.10
 * and 4.0, where the broker backend never runs, the same steps work, on the tiers both
 * times. And a policy cannot stand in for the arguments: with one, a start that declares
 * a queue with other arguments still fails on 4.3.
 * <p>
 * On the node this package shares, in a virtual host of each test's own (policies, tiers
 * and the parking lot belong to a virtual host).
 */
class BackendMigrationIntegrationTests extends VirtualHostTestSupport {

	static final String WORK = "orders";

	static final String PARKING_LOT = "retry.parking-lot";

	/**
	 * How often RabbitMQ updates the figures of a quorum queue that list_queues shows.
	 */
	static final Duration FIGURES_UPDATE = Duration.ofSeconds(5);

	/** What the listener did, in every application a test starts. */
	static final InvocationRecorder DELIVERIES = new InvocationRecorder();

	BackendMigrationIntegrationTests() {
		super("backend-migration");
	}

	@Test
	void brokerToTiersAsDocumented() throws Exception {
		Map<String, Object> before = properties();
		before.put("retry.broker.declare-queue-arguments", "true");
		Map<String, Object> after = new LinkedHashMap<>(before);
		after.put("retry.defaults.backend", "tiers");

		ConfigurableApplicationContext application = start(before);
		assertThat(choice(application).backend()).isEqualTo(this.delayedRetry ? Backend.BROKER : Backend.TIERS);
		// What the queue was declared with.
		assertThat(this.broker.ctl("list_queues", "-p", this.vhost, "name", "arguments").requireSuccess().output())
			.contains("x-delayed-retry-type");
		List<String> first = publish(5, "fail-until-retry:2");
		// 1. The producers stop: nothing is published from here on. 2. and 3.
		drainAndStop(application, before);
		assertThat(first).allMatch(DELIVERIES::succeeded);
		// 4. The queue is deleted.
		this.broker.ctl("delete_queue", "-p", this.vhost, WORK).requireSuccess();

		// 5. Started with the new configuration, and the producers with it.
		try (ConfigurableApplicationContext started = start(after)) {
			assertThat(choice(started).backend()).isEqualTo(Backend.TIERS);
			assertThat(choice(started).reason()).isEqualTo("the backend asked for is tiers");
			List<String> second = publish(3, "fail-until-retry:1");
			await().atMost(Duration.ofSeconds(30)).until(() -> second.stream().allMatch(DELIVERIES::succeeded));
			// Retried through a tier.
			second.forEach((id) -> assertThat(DELIVERIES.of(id).get(1).header(RetryHeaders.TIER)).isNotNull());
		}
		assertThat(declaresEquivalently(Map.of("x-queue-type", "quorum"))).isTrue();
		assertThat(this.broker.queueDepths(this.vhost)).containsEntry(PARKING_LOT, 0L);
	}

	@Test
	void tiersToBrokerAsDocumented() throws Exception {
		Map<String, Object> before = properties();
		Map<String, Object> after = new LinkedHashMap<>(before);
		after.put("retry.broker.declare-queue-arguments", "true");

		ConfigurableApplicationContext application = start(before);
		assertThat(choice(application).backend()).isEqualTo(Backend.TIERS);
		List<String> first = publish(5, "fail-until-retry:2");
		// 1. The producers stop. 2. and 3.: the retries wait in the tiers.
		drainAndStop(application, before);
		assertThat(first).allMatch(DELIVERIES::succeeded);
		// 4. The queue is deleted.
		this.broker.ctl("delete_queue", "-p", this.vhost, WORK).requireSuccess();

		// 5. Started with the new configuration.
		try (ConfigurableApplicationContext started = start(after)) {
			BackendChoice choice = choice(started);
			assertThat(choice.backend()).as(choice.reason())
				.isEqualTo(this.delayedRetry ? Backend.BROKER : Backend.TIERS);
			List<String> second = publish(3, "fail-until-retry:1");
			await().atMost(Duration.ofSeconds(30)).until(() -> second.stream().allMatch(DELIVERIES::succeeded));
			for (String id : second) {
				InvocationRecorder.Invocation retry = DELIVERIES.of(id).get(1);
				if (this.delayedRetry) {
					// Held by the queue: the broker's count, no tier.
					assertThat(retry.header(RetryHeaders.BROKER_DELIVERY_COUNT)).isNotNull();
					assertThat(retry.header(RetryHeaders.TIER)).isNull();
				}
				else {
					assertThat(retry.header(RetryHeaders.TIER)).isNotNull();
				}
			}
		}
		assertThat(declaresEquivalently(delayedRetryArguments())).isTrue();
		assertThat(this.broker.queueDepths(this.vhost)).containsEntry(PARKING_LOT, 0L);
	}

	@Test
	void policyCannotStandInForTheArguments() throws Exception {
		Map<String, Object> before = properties();
		start(before).close();
		CommandResult policy = this.broker.ctl("set_policy", "-p", this.vhost, "orders-delayed-retry", "^orders$",
				"{\"delayed-retry-type\":\"failed\",\"delayed-retry-min\":1000,\"delayed-retry-max\":3000}",
				"--apply-to", "queues");
		Map<String, Object> after = new LinkedHashMap<>(before);
		after.put("retry.broker.declare-queue-arguments", "true");

		if (this.delayedRetry) {
			policy.requireSuccess();
			// The policy delays the queue's retries, but its arguments are those it was
			// declared with.
			assertThatException().isThrownBy(() -> start(after).close())
				.satisfies((failure) -> assertThat(failure).hasStackTraceContaining("QueueArgumentsConflictException")
					.hasStackTraceContaining("argument 'x-delayed-retry-type': the queue has none; this application "
							+ "declares 'failed'"));
			assertThat(declaresEquivalently(Map.of("x-queue-type", "quorum"))).isTrue();
		}
		else {
			assertThat(policy.output()).contains("are not recognised policy settings");
			try (ConfigurableApplicationContext application = start(after)) {
				assertThat(choice(application).backend()).isEqualTo(Backend.TIERS);
			}
		}
	}

	/**
	 * Steps 2 and 3 of docs/migration.md. The application consumes until
	 * {@code list_queues} shows no message in the queue. It stops; once no retry of its
	 * messages can be on its way back from a tier ({@code list_queues} shows none in the
	 * tiers) and 5 seconds more (RabbitMQ updates the figures of a quorum queue every 5
	 * seconds), the queue must still show none: else the application starts again, from
	 * step 2.
	 * @param running the application, running
	 * @param properties its configuration
	 */
	private void drainAndStop(ConfigurableApplicationContext running, Map<String, Object> properties) {
		ConfigurableApplicationContext application = running;
		for (int round = 1;; round++) {
			await().atMost(Duration.ofSeconds(60))
				.pollInterval(Duration.ofMillis(500))
				.until(() -> this.broker.queueDepths(this.vhost).get(WORK) == 0);
			application.close();
			await().atMost(Duration.ofSeconds(60))
				.pollInterval(Duration.ofMillis(500))
				.until(() -> this.broker.queueDepths(this.vhost)
					.entrySet()
					.stream()
					.filter((depth) -> depth.getKey().startsWith("retry.delay."))
					.allMatch((depth) -> depth.getValue() == 0));
			// The procedure's wait (not a synchronisation): a listing may show figures as
			// they were up to 5 seconds before.
			await().pollDelay(FIGURES_UPDATE).atMost(FIGURES_UPDATE.plusSeconds(1)).until(() -> true);
			if (this.broker.queueDepths(this.vhost).get(WORK) == 0) {
				return;
			}
			assertThat(round).as("rounds of steps 2 and 3").isLessThan(3);
			application = start(properties);
		}
	}

	private Map<String, Object> properties() {
		Map<String, Object> properties = ConditionsBroker.applicationProperties(this.broker, this.vhost);
		properties.put("retry.tiers", "1s, 2s, 3s");
		properties.put("retry.defaults.max-retries", "3");
		properties.put("retry.defaults.delays", "1s, 2s, 3s");
		return properties;
	}

	private static ConfigurableApplicationContext start(Map<String, Object> properties) {
		return TestApplications.run(App.class, properties);
	}

	private static BackendChoice choice(ConfigurableApplicationContext application) {
		BackendChoice choice = application.getBean(RetryBackends.class).backends().get(0).choice();
		assertThat(choice).isNotNull();
		return choice;
	}

	private List<String> publish(int count, String script) throws Exception {
		List<String> ids = new ArrayList<>();
		try (Channel channel = this.connection.createChannel()) {
			channel.confirmSelect();
			for (int i = 0; i < count; i++) {
				String id = UUID.randomUUID().toString();
				channel.basicPublish("", WORK, new AMQP.BasicProperties.Builder().messageId(id).deliveryMode(2).build(),
						script.getBytes(StandardCharsets.UTF_8));
				ids.add(id);
			}
			channel.waitForConfirmsOrDie(10_000);
		}
		return ids;
	}

	// RabbitMQ refuses (406) a declaration with other arguments than the queue has; 3.10
	// and 4.0 do not compare the delayed-retry ones.
	private boolean declaresEquivalently(Map<String, Object> arguments) throws Exception {
		try (Channel probe = this.connection.createChannel()) {
			probe.queueDeclare(WORK, true, false, false, arguments);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	private static Map<String, Object> delayedRetryArguments() {
		return Map.of("x-queue-type", "quorum", "x-delayed-retry-type", "failed", "x-delayed-retry-min", 1000,
				"x-delayed-retry-max", 3000);
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		Queue workQueue() {
			return QueueBuilder.durable(WORK).quorum().build();
		}

		@Bean
		Listener listener() {
			return new Listener();
		}

	}

	static class Listener {

		@RabbitListener(queues = "orders")
		@RetryableListener
		void onOrder(Message message) {
			Script.run(message, DELIVERIES);
		}

	}

}
