package io.github.tieredretry.reliability;

import java.util.LinkedHashMap;
import java.util.Map;

import io.github.tieredretry.topology.RetryTopology;
import io.github.tieredretry.topology.RetryTopologyConflictException;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.TestBroker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * A tier queue that already exists with other arguments (declared by an application with the other
 * queue type, or by hand): queue arguments can never change, so startup must fail and say which queue
 * and what to do.
 */
@ExtendWith(OutputCaptureExtension.class)
class TopologyConflictIntegrationTests {

	@Test
	void classicTierQueueLeftBehindStopsAQuorumApplicationFromStartingWithTheQueueAndTheFix(CapturedOutput output) {
		IsolatedTopology topology = new IsolatedTopology();
		String tierQueue = topology.shortTierQueue();
		try (BrokerClient broker = new BrokerClient()) {
			broker.declareQueue(tierQueue, Map.of("x-message-ttl", (int) topology.shortTier().toMillis(),
					"x-dead-letter-exchange", RetryTopology.RETURN_EXCHANGE));

			assertThatException().isThrownBy(() -> start(topology, "quorum"))
				.havingRootCause()
				.isInstanceOf(RetryTopologyConflictException.class)
				.withMessageContaining("PRECONDITION_FAILED")
				.withMessageContaining(tierQueue);
			assertThat(output).contains("APPLICATION FAILED TO START")
				.contains("The queue '" + tierQueue + "' already exists on the broker with other arguments")
				.contains("retry.queue-type=quorum")
				.contains("rabbitmqctl delete_queue " + tierQueue)
				.contains("or set retry.queue-type to match the existing queue");
		}
		finally {
			topology.delete();
		}
	}

	@Test
	void quorumTierQueueLeftBehindStopsAClassicApplicationFromStarting() {
		IsolatedTopology topology = new IsolatedTopology();
		String tierQueue = topology.shortTierQueue();
		try (BrokerClient broker = new BrokerClient()) {
			broker.declareQueue(tierQueue, Map.of("x-queue-type", "quorum", "x-message-ttl",
					(int) topology.shortTier().toMillis(), "x-dead-letter-exchange", RetryTopology.RETURN_EXCHANGE));

			assertThatException().isThrownBy(() -> start(topology, "classic"))
				.satisfies((failure) -> assertThat(conflictIn(failure)).isNotNull()
					.satisfies((conflict) -> {
						assertThat(conflict.getObjectType()).isEqualTo("queue");
						assertThat(conflict.getObjectName()).isEqualTo(tierQueue);
						assertThat(conflict.getMessage()).contains("retry.queue-type=classic")
							.contains("rabbitmqctl delete_queue " + tierQueue);
					}));
		}
		finally {
			topology.delete();
		}
	}

	private static RetryTopologyConflictException conflictIn(Throwable failure) {
		for (Throwable current = failure; current != null; current = current.getCause()) {
			if (current instanceof RetryTopologyConflictException conflict) {
				return conflict;
			}
		}
		return null;
	}

	private static void start(IsolatedTopology topology, String queueType) {
		Map<String, Object> properties = new LinkedHashMap<>();
		for (String pair : TestBroker.get().springProperties()) {
			properties.put(pair.substring(0, pair.indexOf('=')), pair.substring(pair.indexOf('=') + 1));
		}
		properties.put("spring.main.web-application-type", "none");
		properties.put("retry.queue-type", queueType);
		properties.put("retry.tiers", topology.tiers());
		properties.put("retry.parking-lot", topology.parkingLot());
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class).properties(properties)
			.run()) {
			throw new AssertionError("The application started despite the conflicting tier queue");
		}
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

	}

}
