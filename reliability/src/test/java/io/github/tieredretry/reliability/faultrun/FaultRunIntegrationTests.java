package io.github.tieredretry.reliability.faultrun;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

import com.rabbitmq.client.Connection;
import io.github.tieredretry.testbrokers.HarnessBroker;
import io.github.tieredretry.testbrokers.HarnessBrokers;
import io.github.tieredretry.topology.QueueType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The no-loss proof: a fault run per queue type against a RabbitMQ node of the harness's
 * own. No message may be lost; with classic tiers, and only with them, the broker may
 * lose a retry that expired from its tier during the broker fault (docs/guarantees.md).
 * In CI with 20,000 messages ({@code ./mvnw verify}); the long run is
 * {@code ./mvnw -B -pl reliability verify -Dreliability.messages=100000}. With
 * {@code -Dreliability.broker-fault=crash} the broker is killed (SIGKILL) instead of
 * restarted cleanly.
 */
class FaultRunIntegrationTests {

	static HarnessBroker broker;

	@BeforeAll
	static void startOwnBroker() {
		broker = HarnessBrokers.start(FaultRunSettings.defaultWorkDirectory());
		System.out.println("[fault run] broker: " + broker.description());
	}

	@AfterAll
	static void stopOwnBroker() {
		if (broker != null) {
			broker.close();
		}
	}

	static List<String> variants() {
		try (Connection connection = broker.connect("/", "fault-run-version")) {
			return FaultRunSettings.variants(String.valueOf(connection.getServerProperties().get("version")));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("variants")
	void everyMessageIsProcessedOrParkedDespiteKilledConsumersClosedConnectionsAndABrokerRestart(String variant) {
		FaultRunSettings settings = FaultRunSettings.fromSystemProperties(variant);
		QueueType queueType = settings.queueType();
		FaultRunReport report = new FaultRun(broker, settings).run();
		System.out.println("=== Variant: " + settings.variant()
				+ (settings.brokerBackend() ? " (quorum tiers; retries held by the work queue's delayed retry)" : ""));
		System.out.println(report.format());

		assertThat(report.lost()).as("lost messages (%s)", report.lostExamples()).isZero();
		if (queueType == QueueType.QUORUM) {
			// Quorum tiers dead-letter at least once: not even a retry that expired
			// during the broker fault may be lost.
			assertThat(report.lostByBroker()).as("quorum tiers: lost by the broker (%s)", report.lostByBrokerExamples())
				.isZero();
		}
		// Classic tiers dead-letter at most once: a retry that expired from its tier
		// during the broker fault may be lost by the broker (counted apart, in the
		// report); every other missing message counts as lost above.
		assertThat(report.wrongOutcome()).as("messages with an outcome against their plan (%s)", report.wrongExamples())
			.isZero();
		assertThat(report.stalled()).as("the run stalled").isNull();
		assertThat(report.foreignParked()).isZero();
		assertThat(report.count(FaultRun.FaultType.CLOSE_ALL_CONNECTIONS)).isEqualTo(5);
		assertThat(report.count(FaultRun.FaultType.KILL_CONSUMER)).isEqualTo(2);
		assertThat(report.brokerFaults()).isEqualTo(1);
	}

	@Test
	void batchListenerLosesNothingEitherAndEachFailedMessageOfABatchMeetsItsOwnPlan() {
		FaultRunSettings settings = FaultRunSettings.forBatchListenerFromSystemProperties();
		FaultRunReport report = new FaultRun(broker, settings).run();
		System.out.println("[fault run] batch listener, batches of " + settings.batchSize());
		System.out.println(report.format());

		assertThat(report.lost()).as("lost messages (%s)", report.lostExamples()).isZero();
		assertThat(report.lostByBroker()).as("quorum tiers: lost by the broker (%s)", report.lostByBrokerExamples())
			.isZero();
		assertThat(report.wrongOutcome()).as("messages with an outcome against their plan (%s)", report.wrongExamples())
			.isZero();
		assertThat(report.stalled()).as("the run stalled").isNull();
		assertThat(report.count(FaultRun.FaultType.CLOSE_ALL_CONNECTIONS)).isEqualTo(5);
		assertThat(report.count(FaultRun.FaultType.KILL_CONSUMER)).isEqualTo(2);
		assertThat(report.brokerFaults()).isEqualTo(1);
	}

}
