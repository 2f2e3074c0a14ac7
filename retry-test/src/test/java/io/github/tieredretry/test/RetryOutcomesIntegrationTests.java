package io.github.tieredretry.test;

import java.time.Duration;
import java.util.UUID;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.event.MessageParkedEvent;
import io.github.tieredretry.policy.ParkedReason;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link RetryOutcomes} against a real broker, as a user's test would use it with
 * {@link TieredRetryTest}.
 */
@SpringBootTest(classes = RetryOutcomesIntegrationTests.App.class)
@TieredRetryTest(tiers = { "117ms", "233ms" }, delays = { "117ms", "233ms" })
@RabbitIntegrationTest
class RetryOutcomesIntegrationTests {

	/**
	 * Tier names of this test's own (below the range other suites pick at random):
	 * deleted afterwards.
	 */
	static final String[] TIER_QUEUES = { "retry.delay.117ms", "retry.delay.233ms" };

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("outcomes");

	static final String WORK = queues.name("work");

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add("test.work", () -> WORK);
		registry.add("retry.parking-lot", () -> queues.name("parking-lot"));
	}

	@Autowired
	RabbitTemplate rabbit;

	@Autowired
	RetryOutcomes outcomes;

	@Test
	void flakyMessageIsRetriedThroughBothTiersAndRecovers() {
		String id = send("flaky");
		assertThat(this.outcomes.awaitRetry(id, 1).tier()).isEqualTo("117ms");
		assertThat(this.outcomes.awaitRetry(id, 2).tier()).isEqualTo("233ms");
		assertThat(this.outcomes.awaitRecovered(id).retryCount()).isEqualTo(2);
	}

	@Test
	void alwaysFailingMessageIsParkedAsExhaustedAfterItsRetries() {
		String id = send("broken");
		MessageParkedEvent parked = this.outcomes.awaitParked(id);
		assertThat(parked.reason()).isEqualTo(ParkedReason.EXHAUSTED);
		assertThat(parked.retryCount()).isEqualTo(2);
		assertThat(this.outcomes.history(id)).hasSize(3);
		assertThat(this.outcomes.parked()).contains(parked);
	}

	@Test
	void nonRetryableFailureIsParkedAtOnce() {
		String id = send("declined");
		MessageParkedEvent parked = this.outcomes.awaitParked(id);
		assertThat(parked.reason()).isEqualTo(ParkedReason.NOT_RETRYABLE);
		assertThat(parked.retryCount()).isZero();
		assertThat(parked.exception()).endsWith("Declined");
	}

	@Test
	void outcomeThatDoesNotComeFailsSayingWhatHappenedInstead() {
		String id = send("flaky");
		this.outcomes.awaitRecovered(id);
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> this.outcomes.within(Duration.ofMillis(200)).awaitParked(id))
			.withMessageContaining("Message '" + id + "' was not parked within PT0.2S")
			.withMessageContaining("retry 1 scheduled in tier 117ms after java.lang.IllegalStateException")
			.withMessageContaining("recovered on retry 2");
	}

	private String send(String behaviour) {
		String id = behaviour + "-" + UUID.randomUUID();
		this.rabbit.convertAndSend(WORK, behaviour, (message) -> {
			message.getMessageProperties().setMessageId(id);
			return message;
		});
		return id;
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		Queue work(@Value("${test.work}") String name) {
			return new Queue(name);
		}

		@Bean
		Listener listener() {
			return new Listener();
		}

		@Bean
		DisposableBean deleteTestTiers(AmqpAdmin admin) {
			// At context close, after the listener containers stopped: nothing declares
			// them again.
			return () -> {
				for (String tier : TIER_QUEUES) {
					admin.deleteQueue(tier);
				}
			};
		}

	}

	static class Listener {

		@RabbitListener(queues = "${test.work}")
		@RetryableListener(maxRetries = 2, noRetryOn = Declined.class)
		void onMessage(Message message, String behaviour) {
			long retry = message.getMessageProperties().getRetryCount();
			if (behaviour.equals("declined")) {
				throw new Declined();
			}
			if (behaviour.equals("broken") || (behaviour.equals("flaky") && retry < 2)) {
				throw new IllegalStateException(behaviour + " on attempt " + (retry + 1));
			}
		}

	}

	static class Declined extends RuntimeException {

	}

}
