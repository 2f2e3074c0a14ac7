package io.github.tieredretry.autoconfigure;

import io.github.tieredretry.internal.forwarding.MessageForwarder;
import io.github.tieredretry.internal.install.ListenerPolicies;
import io.github.tieredretry.internal.install.RetryableListenerBeanPostProcessor;
import io.github.tieredretry.internal.install.RetryableListenerInstaller;
import io.github.tieredretry.internal.install.RetryableListenerVerifier;
import io.github.tieredretry.internal.topology.RetryDeclarables;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.internal.topology.RetryTopologyInitializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@code retry.enabled=false}: nothing is declared or wrapped, and the
 * unprotected listeners are named at startup.
 */
class RetryDisabledAutoConfigurationTests extends AutoConfigurationTestSupport {

	@Test
	void retryDisabledBacksOffEntirely() {
		this.contextRunner.withPropertyValues("retry.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(RabbitTemplate.class)
				.doesNotHaveBean(TieredRetryAutoConfiguration.class)
				.doesNotHaveBean(RetryProperties.class)
				.doesNotHaveBean(RetryTopology.class)
				.doesNotHaveBean(RetryDeclarables.class)
				.doesNotHaveBean(ListenerPolicies.class)
				.doesNotHaveBean(MessageForwarder.class)
				.doesNotHaveBean(RetryTopologyInitializer.class)
				.doesNotHaveBean(RetryableListenerInstaller.class)
				.doesNotHaveBean(RetryableListenerVerifier.class)
				.doesNotHaveBean(RetryableListenerBeanPostProcessor.class)
				.doesNotHaveBean(TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY));
	}

	@Test
	void retryDisabledLeavesAnnotatedListenersUntouched() {
		this.contextRunner.withPropertyValues("retry.enabled=false", "retry.tiers=5s,1s")
			.withUserConfiguration(OrderListener.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(listenerTypeOf(context, "orders")).isNotEqualTo("RetryingMessageListener");
			});
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void retryDisabledWarnsThatRetryableListenersNowLoopOnFailures(CapturedOutput output) {
		this.contextRunner.withPropertyValues("retry.enabled=false")
			.withUserConfiguration(OrderListener.class, ClassLevelListener.class, PlainListener.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("WARN")
					.contains("retry.enabled=false: @RetryableListener is ignored on "
							+ "AutoConfigurationTestSupport.ClassLevelListener, "
							+ "AutoConfigurationTestSupport.OrderListener#onOrder.")
					.contains("requeued (basic.nack with requeue=true) and delivered again at once. From a classic "
							+ "queue (any RabbitMQ version), and from a quorum queue on RabbitMQ 3.x or 4.3 and later, "
							+ "it comes back again and again: a hot loop while the failure lasts.")
					.contains("From a quorum queue on RabbitMQ 4.0 to 4.2 it is delivered 21 times within a second, "
							+ "then dropped by its delivery limit (20 by default), or dead-lettered if the queue has "
							+ "a dead-letter exchange.")
					.doesNotContain("PlainListener");
			});
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void retryDisabledWarningSaysWhatTheContainerDoesInstead(CapturedOutput output) {
		this.contextRunner
			.withPropertyValues("retry.enabled=false", "spring.rabbitmq.listener.simple.default-requeue-rejected=false")
			.withUserConfiguration(OrderListener.class)
			.run((context) -> assertThat(output).contains("OrderListener#onOrder")
				.contains("is not retried, then rejected: dropped, or dead-lettered")
				.doesNotContain("hot loop"));
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void noRetryDisabledWarningWithoutRetryableListenersOrWhenEnabled(CapturedOutput output) {
		this.contextRunner.withPropertyValues("retry.enabled=false")
			.withUserConfiguration(PlainListener.class)
			.run((context) -> assertThat(context).hasNotFailed());
		this.contextRunner.withUserConfiguration(OrderListener.class)
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).doesNotContain("retry.enabled=false");
	}

}
