package io.github.tieredretry.autoconfigure;

import java.util.List;

import io.github.tieredretry.internal.forwarding.MessageForwarder;
import io.github.tieredretry.internal.install.ListenerPolicies;
import io.github.tieredretry.internal.install.RetryableListenerBeanPostProcessor;
import io.github.tieredretry.internal.install.RetryableListenerInstaller;
import io.github.tieredretry.internal.install.RetryableListenerVerifier;
import io.github.tieredretry.internal.topology.RetryDeclarables;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.internal.topology.RetryTopologyDeclarer;
import io.github.tieredretry.internal.topology.RetryTopologyInitializer;
import io.github.tieredretry.listener.RetryableListenerRegistry;
import io.github.tieredretry.topology.QueueType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.core.io.support.SpringFactoriesLoader;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link TieredRetryAutoConfiguration}: the beans it contributes, when it backs
 * off, and the application's own beans it gives way to.
 */
class TieredRetryAutoConfigurationTests extends AutoConfigurationTestSupport {

	@Test
	void retryBeansArePresentByDefault() {
		this.contextRunner.run((context) -> assertThat(context).hasNotFailed()
			.hasSingleBean(RetryProperties.class)
			.hasSingleBean(RetryTopology.class)
			.hasSingleBean(RetryDeclarables.class)
			.hasSingleBean(ListenerPolicies.class)
			.hasSingleBean(MessageForwarder.class)
			.hasSingleBean(RetryTopologyDeclarer.class)
			.hasSingleBean(RetryTopologyInitializer.class)
			.hasSingleBean(RetryableListenerRegistry.class)
			.hasSingleBean(RetryableListenerInstaller.class)
			.hasSingleBean(RetryableListenerVerifier.class)
			.hasSingleBean(RetryableListenerBeanPostProcessor.class)
			.hasBean(TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY));
	}

	@Test
	void defaultTopologyHasTheDocumentedTiersAndParkingLot() {
		this.contextRunner.run((context) -> {
			RetryTopology topology = context.getBean(RetryTopology.class);
			assertThat(topology.tierQueueNames()).containsExactly("retry.delay.1s", "retry.delay.5s", "retry.delay.30s",
					"retry.delay.2m", "retry.delay.10m", "retry.delay.1h");
			assertThat(topology.parkingLot()).isEqualTo("retry.parking-lot");
			assertThat(topology.queueType()).isEqualTo(QueueType.QUORUM);
		});
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void classicTiersSayAtStartupThatABrokerStopCanLoseARetry(CapturedOutput output) {
		// The runner's broker is unreachable: the notice comes before the topology would
		// be declared.
		this.contextRunner.withPropertyValues("retry.queue-type=classic").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output).contains("Retry tiers are classic queues (retry.queue-type=classic)")
				.contains("Set retry.queue-type=quorum where that matters.");
		});
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void quorumTiersByDefaultNeedNoSuchNotice(CapturedOutput output) {
		this.contextRunner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output).doesNotContain("Retry tiers are classic queues");
		});
	}

	@Test
	void backsOffWithoutRabbitTemplateOnTheClasspath() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(RabbitTemplate.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(RetryTopology.class)
				.doesNotHaveBean(MessageForwarder.class)
				.doesNotHaveBean(TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY));
	}

	@Test
	void backsOffWithoutAConnectionFactory() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(TieredRetryAutoConfiguration.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(RetryTopology.class)
				.doesNotHaveBean(RetryableListenerBeanPostProcessor.class));
	}

	@Test
	void failureAnalyzersAreRegistered() {
		List<FailureAnalyzer> analyzers = SpringFactoriesLoader.forDefaultResourceLocation(getClass().getClassLoader())
			.load(FailureAnalyzer.class, null, (factoryType, implementationName, failure) -> {
			});
		assertThat(analyzers).hasAtLeastOneElementOfType(RetryConfigurationFailureAnalyzer.class)
			.hasAtLeastOneElementOfType(RetryTopologyConflictFailureAnalyzer.class)
			.hasAtLeastOneElementOfType(QueueArgumentsConflictFailureAnalyzer.class);
	}

}
