package io.github.tieredretry.reliability.conditions;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import io.github.tieredretry.testbrokers.CommandResult;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * RabbitMQ 4.3's delayed retry set by policy ({@code delayed-retry-type},
 * {@code delayed-retry-min}, {@code delayed-retry-max}): policies are validated, a
 * policy's type wins over the queue's argument while the smaller minimum and maximum win
 * whichever sets them, an operator policy cannot enforce a minimum delay, a change
 * applies to a live queue, and a client sees none of it. 3.10 and 4.0 refuse the keys. On
 * the node this package shares, in a virtual host of each test's own (policies belong to
 * a virtual host). docs/delayed-retry.md states these facts and links here.
 */
class DelayedRetryPolicyIntegrationTests extends VirtualHostTestSupport {

	static final Duration GRANULARITY = Duration.ofMillis(5);

	static final Duration LATENESS = Duration.ofSeconds(1);

	static final String NOT_RECOGNISED = "are not recognised policy settings";

	DelayedRetryPolicyIntegrationTests() {
		super("delayed-retry-policy");
	}

	@Test
	void policyDelaysTheQueuesItMatchesAndClientsCannotSeeIt() throws Exception {
		CommandResult policy = setPolicy("set_policy", "delayed", "^delayed$",
				"{\"delayed-retry-type\":\"all\",\"delayed-retry-min\":300}");
		Rejecter queue = declare("delayed", Map.of());

		if (this.delayedRetry) {
			policy.requireSuccess();
			assertDelayedBy(queue.rejectAndTime(), Duration.ofMillis(300));
			// What a client can read of a queue: its arguments, not its policy.
			try (Environment environment = amqp10()) {
				assertThat(environment.connectionBuilder().build().management().queueInfo("delayed").arguments())
					.containsOnlyKeys("x-queue-type");
			}
		}
		else {
			assertThat(policy.exitCode()).isNotZero();
			assertThat(policy.output()).contains(NOT_RECOGNISED);
			assertThat(queue.rejectAndTime()).isLessThan(Duration.ofMillis(300).minus(GRANULARITY));
		}
	}

	@Test
	void policiesAreValidatedWhereQueueArgumentsAreNot() {
		Map<String, String> refused = new LinkedHashMap<>();
		refused.put("{\"delayed-retry-type\":\"bogus\",\"delayed-retry-min\":100}",
				"<<\"bogus\">> is not a valid delayed retry type. Must be one of: all, failed, returned, disabled");
		refused.put("{\"delayed-retry-type\":\"all\"}", "delayed-retry-min is required when delayed-retry-type is all");
		refused.put("{\"delayed-retry-type\":\"all\",\"delayed-retry-min\":0}",
				"0 is not a valid delayed retry minimum delay. Must be a positive integer");
		refused.put("{\"delayed-retry-type\":\"all\",\"delayed-retry-min\":\"100\"}",
				"<<\"100\">> is not a valid delayed retry minimum delay. Must be a positive integer");
		refused.put("{\"delayed-retry-type\":\"all\",\"delayed-retry-min\":500,\"delayed-retry-max\":100}",
				"delayed-retry-max (100) must not be smaller than delayed-retry-min (500)");
		List<String> accepted = List.of("{\"delayed-retry-type\":\"disabled\"}", "{\"delayed-retry-min\":100}");

		for (String command : List.of("set_policy", "set_operator_policy")) {
			refused.forEach((definition, error) -> {
				CommandResult result = setPolicy(command, "refused", "^nothing$", definition);
				assertThat(result.exitCode()).as("%s %s", command, definition).isNotZero();
				assertThat(result.output()).contains(this.delayedRetry ? error : NOT_RECOGNISED);
			});
			for (String definition : accepted) {
				CommandResult result = setPolicy(command, "accepted", "^nothing$", definition);
				if (this.delayedRetry) {
					result.requireSuccess();
				}
				else {
					assertThat(result.output()).contains(NOT_RECOGNISED);
				}
			}
		}
	}

	@Test
	void policysTypeWinsOverTheArgumentAndTheSmallerMinimumAndMaximumWin() throws Exception {
		CommandResult typeMinimumAndMaximum = setPolicy("set_policy", "a", "^policy-type$",
				"{\"delayed-retry-type\":\"all\",\"delayed-retry-min\":1500,\"delayed-retry-max\":5000}");
		CommandResult minimumAndMaximum = setPolicy("set_policy", "b", "^argument-type$",
				"{\"delayed-retry-min\":200,\"delayed-retry-max\":300}");
		// "returned" would not delay a reject.
		Rejecter policyType = declare("policy-type",
				Map.of("x-delayed-retry-type", "returned", "x-delayed-retry-min", 200, "x-delayed-retry-max", 300));
		Rejecter argumentType = declare("argument-type",
				Map.of("x-delayed-retry-type", "all", "x-delayed-retry-min", 1500, "x-delayed-retry-max", 5000));

		for (Rejecter queue : List.of(policyType, argumentType)) {
			// Each {all, 200, 300}: the 8th would wait 1600 ms with a maximum of 5000,
			// past the late bound of 1300 ms.
			for (int count = 1; count <= 8; count++) {
				Duration delay = Duration.ofMillis(Math.min(200 * count, 300));
				if (this.delayedRetry) {
					assertDelayedBy(queue.rejectAndTime(), delay);
				}
				else {
					assertThat(queue.rejectAndTime()).isLessThan(Duration.ofMillis(200).minus(GRANULARITY));
				}
			}
		}
		if (this.delayedRetry) {
			typeMinimumAndMaximum.requireSuccess();
			minimumAndMaximum.requireSuccess();
		}
		else {
			assertThat(List.of(typeMinimumAndMaximum, minimumAndMaximum))
				.allSatisfy((result) -> assertThat(result.output()).contains(NOT_RECOGNISED));
		}
	}

	@Test
	void operatorPolicyCannotEnforceAMinimumDelay() throws Exception {
		CommandResult policy = setPolicy("set_operator_policy", "floor", "^floor$",
				"{\"delayed-retry-type\":\"all\",\"delayed-retry-min\":1000,\"delayed-retry-max\":1200}");
		Rejecter queue = declare("floor",
				Map.of("x-delayed-retry-type", "all", "x-delayed-retry-min", 100, "x-delayed-retry-max", 5000));

		Duration delay = queue.rejectAndTime();
		if (this.delayedRetry) {
			policy.requireSuccess();
			// The argument's smaller minimum, not the operator's 1000 ms.
			assertThat(delay).isBetween(Duration.ofMillis(100).minus(GRANULARITY),
					Duration.ofMillis(1000).minus(GRANULARITY));
		}
		else {
			assertThat(policy.output()).contains(NOT_RECOGNISED);
			assertThat(delay).isLessThan(Duration.ofMillis(100).minus(GRANULARITY));
		}
	}

	@Test
	void clearingThePolicyEndsTheDelayOfALiveQueue() throws Exception {
		CommandResult policy = setPolicy("set_policy", "live", "^live$",
				"{\"delayed-retry-type\":\"all\",\"delayed-retry-min\":300}");
		Rejecter queue = declare("live", Map.of());
		if (!this.delayedRetry) {
			assertThat(policy.output()).contains(NOT_RECOGNISED);
			assertThat(queue.rejectAndTime()).isLessThan(Duration.ofMillis(300).minus(GRANULARITY));
			return;
		}
		policy.requireSuccess();
		assertDelayedBy(queue.rejectAndTime(), Duration.ofMillis(300));

		this.broker.ctl("clear_policy", "-p", this.vhost, "live").requireSuccess();

		assertThat(queue.rejectAndTime()).isLessThan(Duration.ofMillis(300).minus(GRANULARITY));
	}

	@Test
	void aPolicysDeliveryLimitLowersButCannotRaiseTheArgumentsAndAQueueRefusesTheArgumentLater() throws Exception {
		setPolicy("set_policy", "limit", "^limited-", "{\"delivery-limit\":3}").requireSuccess();
		Rejecter byPolicy = declare("limited-by-policy", Map.of());
		Rejecter lowerArgument = declare("limited-by-argument", Map.of("x-delivery-limit", 1));
		Rejecter higherArgument = declare("limited-by-both", Map.of("x-delivery-limit", 5));

		assertThat(returnsUntilDropped(byPolicy, "limited-by-policy")).isEqualTo(3);
		assertThat(returnsUntilDropped(lowerArgument, "limited-by-argument")).isEqualTo(1);
		assertThat(returnsUntilDropped(higherArgument, "limited-by-both")).isEqualTo(3);
		// So only the argument says what a client can rely on, and a queue that exists
		// keeps the arguments it was declared with.
		Channel channel = this.connection.createChannel();
		assertThatThrownBy(() -> channel.queueDeclare("limited-by-policy", true, false, false,
				Map.of("x-queue-type", "quorum", "x-delivery-limit", 3)))
			.hasStackTraceContaining("PRECONDITION_FAILED - inequivalent arg 'x-delivery-limit'");
	}

	// How many times the queue gave the message back after a reject before dropping it.
	private int returnsUntilDropped(Rejecter queue, String name) throws Exception {
		int returns = 0;
		while (returns < 10) {
			int delivered = queue.arrivals().arrivals().size();
			queue.channel().basicReject(queue.arrivals().arrival(delivered, Duration.ofSeconds(1)).deliveryTag(), true);
			try {
				queue.arrivals().arrival(delivered + 1, Duration.ofSeconds(3));
			}
			catch (ConditionTimeoutException ex) {
				assertThat(this.connection.createChannel().queueDeclarePassive(name).getMessageCount())
					.as("messages left in %s", name)
					.isZero();
				return returns;
			}
			returns++;
		}
		return returns;
	}

	private static void assertDelayedBy(Duration measured, Duration delay) {
		assertThat(measured).as("redelivered after").isBetween(delay.minus(GRANULARITY), delay.plus(LATENESS));
	}

	private CommandResult setPolicy(String command, String name, String pattern, String definition) {
		return this.broker.ctl(command, "-p", this.vhost, name, pattern, definition, "--apply-to", "queues");
	}

	/**
	 * Declare a quorum queue, publish a message to it and consume it.
	 * @param queue the queue
	 * @param arguments its arguments besides its type
	 * @return what rejects the message and times its return
	 */
	private Rejecter declare(String queue, Map<String, Object> arguments) throws Exception {
		Map<String, Object> quorum = new LinkedHashMap<>(arguments);
		quorum.put("x-queue-type", "quorum");
		Channel channel = this.connection.createChannel();
		channel.queueDeclare(queue, true, false, false, quorum);
		channel.basicQos(1);
		Arrivals arrivals = new Arrivals(channel);
		channel.basicConsume(queue, false, arrivals);
		channel.basicPublish("", queue, null, "m".getBytes(StandardCharsets.UTF_8));
		arrivals.arrival(1, Duration.ofSeconds(10));
		return new Rejecter(channel, arrivals);
	}

	private Environment amqp10() {
		return new AmqpEnvironmentBuilder().connectionSettings()
			.host(this.broker.host())
			.port(this.broker.port())
			.username(this.broker.username())
			.password(this.broker.password())
			.virtualHost(this.vhost)
			.environmentBuilder()
			.build();
	}

	/**
	 * Rejects the message a queue's consumer holds and times how long the queue takes to
	 * deliver it again.
	 *
	 * @param channel the consumer's channel
	 * @param arrivals the consumer
	 */
	record Rejecter(Channel channel, Arrivals arrivals) {

		Duration rejectAndTime() throws Exception {
			int delivered = this.arrivals.arrivals().size();
			long returned = System.nanoTime();
			this.channel.basicReject(this.arrivals.arrival(delivered, Duration.ofSeconds(1)).deliveryTag(), true);
			return this.arrivals.arrival(delivered + 1, Duration.ofSeconds(15)).since(returned);
		}

	}

}
