package io.github.tieredretry.internal.forwarding;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.TestBroker;
import io.github.tieredretry.testsupport.TestForwarding;
import io.github.tieredretry.testsupport.TestQueues;
import io.github.tieredretry.topology.QueueType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ChannelProxy;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * {@link ConfirmedPublisher} against a real broker: confirmed, returned, and refused for
 * a missing exchange.
 */
class ConfirmedPublisherIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("publisher");

	final String queue = queues.name("work");

	/** A queue that rejects every publish. */
	final String full = queues.name("full");

	CachingConnectionFactory connectionFactory;

	TestForwarding forwarding;

	ConfirmedPublisher publisher;

	BrokerClient broker;

	@BeforeEach
	void setUp() {
		this.broker = new BrokerClient();
		this.broker.declareQueue(this.queue);
		this.broker.purge(this.queue);
		TestBroker testBroker = TestBroker.get();
		this.connectionFactory = new CachingConnectionFactory(testBroker.clientConnectionFactory());
		this.connectionFactory.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.SIMPLE);
		this.forwarding = forwarding(this.connectionFactory, Duration.ofSeconds(5));
		this.publisher = this.forwarding.publisher();
	}

	@AfterEach
	void tearDown() {
		this.forwarding.close();
		this.broker.close();
		this.connectionFactory.destroy();
	}

	@Test
	void confirmedPublishArrivesInTheQueue() {
		this.publisher.publishAndWait("", this.queue, new AMQP.BasicProperties(), "x".getBytes());
		assertThat(this.broker.count(this.queue)).isEqualTo(1);
	}

	@Test
	void unroutablePublishFailsAsReturned() {
		assertThatExceptionOfType(ForwardFailedException.class)
			.isThrownBy(() -> this.publisher.publishAndWait("", "no-such-queue-" + UUID.randomUUID(),
					new AMQP.BasicProperties(), "x".getBytes()))
			.satisfies((ex) -> assertThat(ex.getKind()).isEqualTo(ForwardFailedException.Kind.RETURNED));
	}

	@Test
	void publishToAMissingExchangeFailsAsMissingExchangeAndTheNextPublishWorks() {
		assertThatExceptionOfType(ForwardFailedException.class)
			.isThrownBy(() -> this.publisher.publishAndWait("no-such-exchange-" + UUID.randomUUID(), this.queue,
					new AMQP.BasicProperties(), "x".getBytes()))
			.satisfies((ex) -> assertThat(ex.getKind()).isEqualTo(ForwardFailedException.Kind.MISSING_EXCHANGE));
		this.publisher.publishAndWait("", this.queue, new AMQP.BasicProperties(), "y".getBytes());
		assertThat(this.broker.count(this.queue)).isEqualTo(1);
	}

	@Test
	void noPublishToAMissingExchangeIsEverReportedAsConfirmed() {
		// The broker closes the channel after basic.publish; a wait for confirms that ran
		// on a channel the cache had meanwhile swapped in would find nothing outstanding
		// and report success (issue #18).
		int confirmed = 0;
		String missing = "no-such-exchange-" + UUID.randomUUID() + "-";
		for (int i = 0; i < 2000; i++) {
			try {
				this.publisher.publishAndWait(missing + i, this.queue, new AMQP.BasicProperties(), "x".getBytes());
				confirmed++;
			}
			catch (ForwardFailedException ex) {
				assertThat(ex.getKind()).isEqualTo(ForwardFailedException.Kind.MISSING_EXCHANGE);
			}
		}
		assertThat(confirmed).as("publishes to a missing exchange reported as confirmed").isZero();
		assertThat(this.broker.count(this.queue)).isZero();
	}

	@Test
	void channelThatDiesBetweenCheckoutAndPublishFailsThePublishAndPublishesNothingElsewhere() {
		// The cached-channel proxy would replace the dead channel by a new one and
		// publish there, where no listener waits for the confirm: a message the publisher
		// reported as failed would exist anyway.
		ConnectionFactory dyingChannels = (ConnectionFactory) Proxy.newProxyInstance(getClass().getClassLoader(),
				new Class<?>[] { ConnectionFactory.class }, (proxy, method, arguments) -> {
					Object result = invoke(method, this.connectionFactory, arguments);
					return (result instanceof Connection connection) ? channelsDieOnCheckout(connection) : result;
				});
		try (TestForwarding dying = TestForwarding.on(dyingChannels, Duration.ofSeconds(2),
				new RetryTopology(TierLadder.of(List.of(Duration.ofSeconds(1))), QueueType.CLASSIC, "unused"))) {
			assertThatExceptionOfType(ForwardFailedException.class).isThrownBy(
					() -> dying.publisher().publishAndWait("", this.queue, new AMQP.BasicProperties(), "x".getBytes()));
			assertThat(this.broker.count(this.queue)).isZero();
		}
	}

	private static Connection channelsDieOnCheckout(Connection connection) {
		return (Connection) Proxy.newProxyInstance(ConfirmedPublisherIntegrationTests.class.getClassLoader(),
				new Class<?>[] { Connection.class }, (proxy, method, arguments) -> {
					Object result = invoke(method, connection, arguments);
					if (result instanceof ChannelProxy channel) {
						channel.getTargetChannel().close();
					}
					return result;
				});
	}

	private static Object invoke(Method method, Object target, Object[] arguments) throws Throwable {
		try {
			return method.invoke(target, arguments);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

	@Test
	void forwardChannelThatDiesUnderLoadFailsWhatWasInFlightOnItAndEveryConfirmedForwardArrived() {
		// Forwards share a few channels. One forward to a missing exchange makes the
		// broker close its channel (404) while hundreds of others are in flight: each of
		// them is either confirmed, and then in the queue, or fails as a publish error,
		// to be forwarded again. None is lost, none waits for its timeout, and only the
		// forward to the missing exchange fails as a missing exchange.
		int forwards = 2000;
		String missing = "no-such-exchange-" + UUID.randomUUID();
		List<CompletableFuture<Void>> results = new ArrayList<>();
		for (int i = 0; i < forwards; i++) {
			String exchange = (i == forwards / 2) ? missing : "";
			results.add(this.publisher.publish(exchange, this.queue, new AMQP.BasicProperties(),
					Integer.toString(i).getBytes(StandardCharsets.UTF_8)));
		}
		assertThat(CompletableFuture.allOf(results.stream()
			.map((result) -> result.handle((done, failure) -> null))
			.toArray(CompletableFuture[]::new))).as("every forward settled well before its 5 s confirm timeout")
			.succeedsWithin(Duration.ofSeconds(4));

		Set<String> confirmed = new HashSet<>();
		Map<ForwardFailedException.Kind, Integer> failures = new EnumMap<>(ForwardFailedException.Kind.class);
		for (int i = 0; i < forwards; i++) {
			Throwable failure = catchThrowable(results.get(i)::join);
			if (failure == null) {
				confirmed.add(Integer.toString(i));
			}
			else {
				assertThat(failure).hasCauseInstanceOf(ForwardFailedException.class);
				ForwardFailedException.Kind kind = ((ForwardFailedException) failure.getCause()).getKind();
				assertThat(kind).as("forward %d", i)
					.isEqualTo((i == forwards / 2) ? ForwardFailedException.Kind.MISSING_EXCHANGE
							: ForwardFailedException.Kind.PUBLISH_ERROR);
				failures.merge(kind, 1, Integer::sum);
			}
		}
		Set<String> arrived = new HashSet<>();
		this.broker.drain(this.queue).forEach((received) -> arrived.add(received.bodyText()));
		assertThat(arrived).as("every confirmed forward arrived").containsAll(confirmed);
		assertThat(failures).containsEntry(ForwardFailedException.Kind.MISSING_EXCHANGE, 1);
		assertThat(confirmed).as("forwards on the other channel, and before the close, were confirmed")
			.hasSizeGreaterThan(forwards / 4);
	}

	@Test
	void publishToAFullQueueThatRejectsPublishesFailsAsNacked() {
		this.broker.declareQueue(this.full, Map.of("x-max-length", 0, "x-overflow", "reject-publish"));
		assertThatExceptionOfType(ForwardFailedException.class)
			.isThrownBy(() -> this.publisher.publishAndWait("", this.full, new AMQP.BasicProperties(), "x".getBytes()))
			.satisfies((ex) -> assertThat(ex.getKind()).isEqualTo(ForwardFailedException.Kind.NACKED));
		assertThat(kindOfAsyncFailure("", this.full)).isEqualTo(ForwardFailedException.Kind.NACKED);
	}

	@Test
	void asynchronousPublishCompletesWhenTheBrokerConfirms() {
		this.publisher.publish("", this.queue, new AMQP.BasicProperties(), "x".getBytes()).join();
		assertThat(this.broker.count(this.queue)).isEqualTo(1);
	}

	@Test
	void asynchronousPublishFailsAsReturnedOrMissingExchange() {
		assertThat(kindOfAsyncFailure("", "no-such-queue-" + UUID.randomUUID()))
			.isEqualTo(ForwardFailedException.Kind.RETURNED);
		assertThat(kindOfAsyncFailure("no-such-exchange-" + UUID.randomUUID(), this.queue))
			.isEqualTo(ForwardFailedException.Kind.MISSING_EXCHANGE);
	}

	@Test
	void everyFailedAsynchronousPublishGivesItsSlotBack() {
		// One channel in the cache, so one forward in flight at a time: a slot not given
		// back would make the publish after the failures wait for the confirm timeout and
		// fail.
		this.connectionFactory.setChannelCacheSize(1);
		TestForwarding onePermitForwarding = forwarding(this.connectionFactory, Duration.ofSeconds(2));
		ConfirmedPublisher onePermit = onePermitForwarding.publisher();
		this.broker.declareQueue(this.full, Map.of("x-max-length", 0, "x-overflow", "reject-publish"));
		try {
			for (int i = 0; i < 3; i++) {
				assertThat(kindOfAsyncFailure(onePermit, "", "no-such-queue-" + UUID.randomUUID()))
					.isEqualTo(ForwardFailedException.Kind.RETURNED);
				assertThat(kindOfAsyncFailure(onePermit, "", this.full)).isEqualTo(ForwardFailedException.Kind.NACKED);
				assertThat(kindOfAsyncFailure(onePermit, "no-such-exchange-" + UUID.randomUUID(), this.queue))
					.isEqualTo(ForwardFailedException.Kind.MISSING_EXCHANGE);
			}
			onePermit.publish("", this.queue, new AMQP.BasicProperties(), "x".getBytes()).join();
			assertThat(this.broker.count(this.queue)).isEqualTo(1);
		}
		finally {
			onePermitForwarding.close();
		}
	}

	@Test
	void closedPublisherFailsNewForwardsWithoutThrowing() {
		TestForwarding closedForwarding = forwarding(this.connectionFactory, Duration.ofSeconds(2));
		closedForwarding.close();
		assertThat(kindOfAsyncFailure(closedForwarding.publisher(), "", this.queue)).isNotNull();
		assertThat(this.broker.count(this.queue)).isLessThanOrEqualTo(1);
	}

	private static TestForwarding forwarding(CachingConnectionFactory connectionFactory, Duration confirmTimeout) {
		return TestForwarding.on(connectionFactory, confirmTimeout,
				new RetryTopology(TierLadder.of(List.of(Duration.ofSeconds(1))), QueueType.CLASSIC, "unused"));
	}

	private ForwardFailedException.Kind kindOfAsyncFailure(String exchange, String routingKey) {
		return kindOfAsyncFailure(this.publisher, exchange, routingKey);
	}

	private static ForwardFailedException.Kind kindOfAsyncFailure(ConfirmedPublisher publisher, String exchange,
			String routingKey) {
		CompletableFuture<Void> forward = publisher.publish(exchange, routingKey, new AMQP.BasicProperties(),
				"x".getBytes());
		Throwable failure = catchThrowable(forward::join);
		assertThat(failure).isInstanceOf(CompletionException.class).hasCauseInstanceOf(ForwardFailedException.class);
		return ((ForwardFailedException) failure.getCause()).getKind();
	}

}
