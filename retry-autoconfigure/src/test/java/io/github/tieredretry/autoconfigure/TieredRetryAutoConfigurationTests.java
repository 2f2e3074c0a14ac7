package io.github.tieredretry.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.forwarding.MessageForwarder;
import io.github.tieredretry.testsupport.TestForwarding;
import io.github.tieredretry.listener.ListenerPolicies;
import io.github.tieredretry.listener.RetryableListenerBeanPostProcessor;
import io.github.tieredretry.listener.RetryableListenerConfigurationException;
import io.github.tieredretry.listener.RetryableListenerInfo;
import io.github.tieredretry.listener.RetryableListenerInstaller;
import io.github.tieredretry.listener.RetryableListenerRegistry;
import io.github.tieredretry.listener.RetryableListenerVerifier;
import io.github.tieredretry.policy.PolicyLayer;
import io.github.tieredretry.policy.TierLadder;
import io.github.tieredretry.testsupport.Ports;
import io.github.tieredretry.topology.QueueType;
import io.github.tieredretry.topology.RetryDeclarables;
import io.github.tieredretry.topology.RetryTopology;
import io.github.tieredretry.topology.RetryTopologyDeclarer;
import io.github.tieredretry.topology.RetryTopologyInitializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.amqp.core.Binding;
import org.springframework.amqp.core.Declarable;
import org.springframework.amqp.core.Exchange;
import org.springframework.amqp.core.ExchangeTypes;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitHandler;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ContextConsumer;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.io.support.SpringFactoriesLoader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.assertj.core.api.Assertions.entry;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Tests for {@link TieredRetryAutoConfiguration}.
 * <p>
 * No broker is needed, and none is touched: the application points at a local port nothing listens on,
 * so the topology initializer only warns, and listener containers are created but never started. That
 * also keeps these tests from declaring the default-named retry topology on a shared broker.
 */
class TieredRetryAutoConfigurationTests {

	private static final int UNREACHABLE_PORT = Ports.unused();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RabbitAutoConfiguration.class, TieredRetryAutoConfiguration.class,
				RetryDisabledAutoConfiguration.class))
		.withPropertyValues("spring.rabbitmq.host=127.0.0.1", "spring.rabbitmq.port=" + UNREACHABLE_PORT,
				"spring.rabbitmq.listener.simple.auto-startup=false",
				"spring.rabbitmq.listener.direct.auto-startup=false");

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
			assertThat(topology.tierQueueNames()).containsExactly("retry.delay.1s", "retry.delay.5s",
					"retry.delay.30s", "retry.delay.2m", "retry.delay.10m", "retry.delay.1h");
			assertThat(topology.parkingLot()).isEqualTo("retry.parking-lot");
			assertThat(topology.queueType()).isEqualTo(QueueType.QUORUM);
		});
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void classicTiersSayAtStartupThatABrokerStopCanLoseARetry(CapturedOutput output) {
		// The runner's broker is unreachable: the notice comes before the topology would be declared.
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
				assertThat(listenerOf(context, "orders").getClass().getSimpleName())
					.isNotEqualTo("RetryingMessageListener");
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
							+ "TieredRetryAutoConfigurationTests.ClassLevelListener, "
							+ "TieredRetryAutoConfigurationTests.OrderListener#onOrder.")
					.contains("requeued and redelivered at once, again and again: a hot loop")
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
	void userRetryTopologyReplacesOurs() {
		this.contextRunner.withUserConfiguration(UserTopologyConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(RetryTopology.class);
			RetryTopology topology = context.getBean(RetryTopology.class);
			assertThat(topology).isSameAs(context.getBean("userTopology"));
			assertThat(queueNames(checked(context))).containsExactly("user.parking-lot",
					"retry.delay.2s", "retry.delay.4s");
		});
	}

	@Test
	void userListenerPoliciesReplaceOurs() {
		this.contextRunner.withUserConfiguration(UserListenerPoliciesConfiguration.class)
			.run((context) -> assertThat(context).hasSingleBean(ListenerPolicies.class)
				.getBean(ListenerPolicies.class)
				.isSameAs(context.getBean("userPolicies")));
	}

	@Test
	void userMessageForwarderReplacesOurs() {
		this.contextRunner.withUserConfiguration(UserForwarderConfiguration.class)
			.run((context) -> assertThat(context).hasSingleBean(MessageForwarder.class)
				.getBean(MessageForwarder.class)
				.isSameAs(context.getBean("userForwarder")));
	}

	@Test
	void userRegistryReplacesOurs() {
		this.contextRunner.withUserConfiguration(UserRegistryConfiguration.class)
			.run((context) -> assertThat(context).hasSingleBean(RetryableListenerRegistry.class)
				.getBean(RetryableListenerRegistry.class)
				.isSameAs(context.getBean("userRegistry")));
	}

	@Test
	void userPublisherConnectionFactoryReplacesOurs() {
		this.contextRunner.withUserConfiguration(UserPublisherConnectionFactoryConfiguration.class).run((context) -> {
			assertThat(context).hasNotFailed();
			CachingConnectionFactory publisher = context.getBean(TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY,
					CachingConnectionFactory.class);
			assertThat(publisher.getHost()).isEqualTo("publisher.example.com");
			// The application's own connection factory is still Spring Boot's.
			assertThat(context.getBean("rabbitConnectionFactory")).isNotSameAs(publisher);
		});
	}

	@Test
	void publisherConnectionFactoryUsesSimpleConfirmsWhateverTheApplicationSets() {
		for (String confirmType : List.of("none", "simple", "correlated")) {
			this.contextRunner.withPropertyValues("spring.rabbitmq.publisher-confirm-type=" + confirmType,
					"spring.rabbitmq.publisher-returns=true")
				.run((context) -> {
					CachingConnectionFactory publisher = context.getBean(
							TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY, CachingConnectionFactory.class);
					assertThat(publisher.isSimplePublisherConfirms()).as(confirmType).isTrue();
					assertThat(publisher.isPublisherConfirms()).as(confirmType).isFalse();
					// Returns are handled on the channel itself, per publish.
					assertThat(publisher.isPublisherReturns()).as(confirmType).isFalse();
				});
		}
	}

	@Test
	void applicationConnectionFactoryKeepsTheApplicationsConfirmType() {
		this.contextRunner.withPropertyValues("spring.rabbitmq.publisher-confirm-type=correlated").run((context) -> {
			CachingConnectionFactory application = context.getBean("rabbitConnectionFactory",
					CachingConnectionFactory.class);
			assertThat(application.isPublisherConfirms()).isTrue();
			assertThat(application.isSimplePublisherConfirms()).isFalse();
		});
	}

	@Test
	void userDefinedPublisherConnectionFactoryWithoutSimpleConfirmsFailsStartup() {
		this.contextRunner.withUserConfiguration(UnconfirmedPublisherConnectionFactoryConfiguration.class)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining(TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY)
				.hasMessageContaining("SIMPLE"));
	}

	@Test
	void publisherConnectionFactoryConnectsToTheApplicationsBrokerOnAConnectionOfItsOwn() {
		this.contextRunner.withPropertyValues("spring.rabbitmq.virtual-host=/orders", "spring.rabbitmq.username=shop")
			.run((context) -> {
				CachingConnectionFactory application = context.getBean("rabbitConnectionFactory",
						CachingConnectionFactory.class);
				CachingConnectionFactory publisher = context.getBean(
						TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY, CachingConnectionFactory.class);
				assertThat(publisher).isNotSameAs(application);
				assertThat(publisher.getHost()).isEqualTo(application.getHost());
				assertThat(publisher.getPort()).isEqualTo(UNREACHABLE_PORT);
				assertThat(publisher.getVirtualHost()).isEqualTo("/orders");
				assertThat(publisher.getUsername()).isEqualTo("shop");
			});
	}

	@Test
	void publisherConnectionFactoryIsNotInjectedWhereAConnectionFactoryIsAutowired() {
		this.contextRunner.withUserConfiguration(ConnectionFactoryConsumerConfiguration.class).run((context) -> {
			assertThat(context).hasNotFailed();
			Object application = context.getBean("rabbitConnectionFactory");
			assertThat(context.getBean(ConnectionFactoryConsumer.class).connectionFactory()).isSameAs(application);
			assertThat(context.getBean(ConnectionFactory.class)).isSameAs(application);
			assertThat(context.getBean(RabbitTemplate.class).getConnectionFactory()).isSameAs(application);
		});
	}

	@Test
	void declarablesAreThreeExchangesTheTierQueuesAndTheParkingLot() {
		this.contextRunner.withPropertyValues("retry.tiers=1500ms,10s,2m", "retry.queue-type=classic").run((context) -> {
			RetryDeclarables declarables = checked(context);
			assertThat(declared(declarables, Exchange.class))
				.extracting(Exchange::getName, Exchange::getType, Exchange::isDurable)
				.containsExactlyInAnyOrder(
						tuple("retry.delay", ExchangeTypes.HEADERS, true),
						tuple("retry.return", ExchangeTypes.DIRECT, true),
						tuple("retry.unroutable", ExchangeTypes.FANOUT, true));
			Exchange returns = declared(declarables, Exchange.class)
				.stream()
				.filter((exchange) -> exchange.getName().equals("retry.return"))
				.findFirst()
				.orElseThrow();
			assertThat(returns.getArguments()).containsEntry("alternate-exchange", "retry.unroutable");
			assertThat(queueNames(declarables)).containsExactly("retry.parking-lot", "retry.delay.1500ms",
					"retry.delay.10s", "retry.delay.2m");
			assertThat(declared(declarables, Queue.class)).allSatisfy((queue) -> {
				assertThat(queue.isDurable()).isTrue();
				assertThat(queue.isExclusive()).isFalse();
				assertThat(queue.isAutoDelete()).isFalse();
			});
			assertThat(queue(declarables, "retry.delay.1500ms").getArguments()).containsOnly(
					entry("x-message-ttl", 1500), entry("x-dead-letter-exchange", "retry.return"));
			assertThat(queue(declarables, "retry.delay.2m").getArguments()).containsEntry("x-message-ttl", 120_000);
			assertThat(queue(declarables, "retry.parking-lot").getArguments()).isEmpty();
		});
	}

	@Test
	void nothingIsDeclaredOnNewConnectionsBeforeTheTopologyHasBeenCheckedAgainstTheBroker() {
		// The broker is unreachable here: the startup check could not run.
		this.contextRunner.withUserConfiguration(OrderListener.class).run((context) -> {
			assertThat(context.getBean(RetryTopologyDeclarer.class).isChecked()).isFalse();
			assertThat(context.getBean(RetryDeclarables.class).getDeclarables()).isEmpty();
			assertThat(context.getBean(RetryDeclarables.class).getDeclarablesByType(Queue.class)).isEmpty();
			assertThat(checked(context).getDeclarables()).hasSize(context.getBean(RetryTopology.class)
				.declarables()
				.size());
		});
	}

	@Test
	void eachTierQueueIsBoundToTheDelayExchangeByItsTierHeader() {
		this.contextRunner.withPropertyValues("retry.tiers=1s,90s").run((context) -> {
			List<Binding> bindings = declared(checked(context), Binding.class);
			assertThat(bindings).filteredOn((binding) -> binding.getExchange().equals("retry.delay"))
				.extracting(Binding::getDestination, (binding) -> binding.getArguments().get("retry-tier"),
						(binding) -> binding.getArguments().get("x-match"))
				.containsExactlyInAnyOrder(tuple("retry.delay.1s", "1s", "all"),
						tuple("retry.delay.90s", "90s", "all"));
			assertThat(bindings).filteredOn((binding) -> binding.getExchange().equals("retry.unroutable"))
				.extracting(Binding::getDestination)
				.containsExactly("retry.parking-lot");
		});
	}

	@Test
	void quorumTiersByDefaultDeadLetterAtLeastOnce() {
		this.contextRunner.withPropertyValues("retry.parking-lot=orders.parked")
			.run((context) -> {
				RetryDeclarables declarables = checked(context);
				assertThat(queueNames(declarables)).hasSize(7).contains("orders.parked");
				assertThat(declared(declarables, Queue.class))
					.filteredOn((queue) -> queue.getName().startsWith("retry.delay."))
					.hasSize(6)
					.allSatisfy((queue) -> assertThat(queue.getArguments()).contains(entry("x-queue-type", "quorum"),
							entry("x-dead-letter-strategy", "at-least-once"), entry("x-overflow", "reject-publish"),
							entry("x-dead-letter-exchange", "retry.return")));
				assertThat(queue(declarables, "orders.parked").getArguments())
					.containsOnly(entry("x-queue-type", "quorum"), entry("x-delivery-limit", Integer.MAX_VALUE));
			});
	}

	@Test
	void declarablesByTypeAreTheDeclarablesOfThatType() {
		this.contextRunner.withUserConfiguration(OrderListener.class).run((context) -> {
			RetryDeclarables declarables = checked(context);
			assertThat(declarables.getDeclarablesByType(Exchange.class))
				.containsExactlyElementsOf(declared(declarables, Exchange.class));
			assertThat(declarables.getDeclarablesByType(Queue.class))
				.containsExactlyElementsOf(declared(declarables, Queue.class));
			assertThat(declarables.getDeclarablesByType(Binding.class)).hasSize(8)
				.containsExactlyElementsOf(declared(declarables, Binding.class));
		});
	}

	@Test
	void workQueuesOfRetryableListenersAreBoundToTheReturnExchangeWithoutNewExchanges() {
		this.contextRunner.withUserConfiguration(OrderListener.class, InvoiceListener.class, PlainListener.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				RetryDeclarables declarables = checked(context);
				assertThat(declared(declarables, Exchange.class)).hasSize(3);
				assertThat(declared(declarables, Binding.class))
					.filteredOn((binding) -> binding.getExchange().equals("retry.return"))
					.extracting(Binding::getDestination, Binding::getRoutingKey)
					.containsExactlyInAnyOrder(tuple("orders", "orders"),
							tuple("invoices", "invoices"));
			});
	}

	@Test
	void retryableListenerIsWrappedAndUnannotatedListenerIsUntouched() {
		this.contextRunner.withUserConfiguration(OrderListener.class, PlainListener.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(listenerOf(context, "orders").getClass().getSimpleName()).isEqualTo("RetryingMessageListener");
			assertThat(listenerOf(context, "plain").getClass().getSimpleName()).isNotEqualTo("RetryingMessageListener");
			List<RetryableListenerInfo> listeners = context.getBean(RetryableListenerRegistry.class).listeners();
			assertThat(listeners).singleElement().satisfies((info) -> {
				assertThat(info.listener()).isEqualTo("TieredRetryAutoConfigurationTests.OrderListener#onOrder");
				assertThat(info.queues()).containsExactly("orders");
				assertThat(info.policyName()).isEmpty();
			});
		});
	}

	@Test
	void retryableListenerOnTheDirectContainerIsWrapped() {
		this.contextRunner.withPropertyValues("spring.rabbitmq.listener.type=direct")
			.withUserConfiguration(OrderListener.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(listenerOf(context, "orders").getClass().getSimpleName())
					.isEqualTo("RetryingMessageListener");
			});
	}

	@Test
	void classLevelRetryableListenerAppliesToTheClassLevelRabbitListener() {
		this.contextRunner.withUserConfiguration(ClassLevelListener.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(RetryableListenerRegistry.class).listeners()).singleElement()
				.satisfies((info) -> {
					assertThat(info.listener()).isEqualTo("TieredRetryAutoConfigurationTests.ClassLevelListener");
					assertThat(info.method()).isNull();
				});
		});
	}

	@Test
	void listenerPolicyTakesAnnotationThenNamedPolicyThenDefaults() {
		this.contextRunner
			.withPropertyValues("retry.defaults.max-retries=7", "retry.defaults.timeout=1h",
					"retry.policies.payments.delays=10s,100s", "retry.policies.payments.max-retries=9")
			.withUserConfiguration(PaymentListener.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				RetryableListenerInfo info = context.getBean(RetryableListenerRegistry.class).listeners().get(0);
				assertThat(info.policyName()).isEqualTo("payments");
				assertThat(info.policy().maxRetries()).isEqualTo(2);
				assertThat(info.policy().delays()).containsExactly(Duration.ofSeconds(10), Duration.ofSeconds(100));
				assertThat(info.policy().timeout()).isEqualTo(Duration.ofHours(1));
			});
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("invalidProperties")
	void invalidPropertyFailsStartupNamingThePropertyAndTheFix(String assignment, String property, String fix) {
		this.contextRunner.withPropertyValues(assignment).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining(property)
				.hasMessageContaining(fix)
				.satisfies((failure) -> assertThat(((InvalidConfigurationPropertyValueException) failure).getName())
					.isEqualTo(property));
		});
	}

	static Stream<Arguments> invalidProperties() {
		String longName = "p".repeat(256);
		return Stream.of(
				Arguments.of("retry.tiers=", "retry.tiers", "at least one tier is required"),
				Arguments.of("retry.tiers=5s,1s", "retry.tiers", "'1s' follows '5s'"),
				Arguments.of("retry.tiers=1s,1s", "retry.tiers", "without duplicates"),
				Arguments.of("retry.tiers=0s,5s", "retry.tiers", "must be a positive duration"),
				Arguments.of("retry.tiers=-1s", "retry.tiers", "must be a positive duration"),
				Arguments.of("retry.tiers=1s,50d", "retry.tiers", "maximum message TTL"),
				Arguments.of("retry.tiers=1500us", "retry.tiers", "whole number of milliseconds"),
				Arguments.of("retry.tiers=5s,1s", "retry.tiers", "Use positive, strictly ascending durations"),
				Arguments.of("retry.defaults.max-retries=-1", "retry.defaults.max-retries", "Use 0 or more retries"),
				Arguments.of("retry.policies.payments.max-retries=-2", "retry.policies.payments.max-retries",
						"Use 0 or more retries"),
				Arguments.of("retry.defaults.immediate-retries=-1", "retry.defaults.immediate-retries",
						"Use 0 or more in-place retries"),
				Arguments.of("retry.defaults.multiplier=0.5", "retry.defaults.multiplier", "at least 1.0"),
				Arguments.of("retry.policies.payments.multiplier=0.99", "retry.policies.payments.multiplier",
						"at least 1.0"),
				Arguments.of("retry.defaults.initial-interval=0s", "retry.defaults.initial-interval",
						"Use a positive duration"),
				Arguments.of("retry.defaults.max-interval=-1s", "retry.defaults.max-interval",
						"Use a positive duration"),
				Arguments.of("retry.defaults.timeout=0s", "retry.defaults.timeout", "Use a positive duration"),
				Arguments.of("retry.policies.payments.timeout=-5m", "retry.policies.payments.timeout",
						"Use a positive duration"),
				Arguments.of("retry.defaults.delays=10s,-1s", "retry.defaults.delays", "'-1s' is not usable. Use delays of zero or more"),
				Arguments.of("retry.defaults.retry-on=com.example.NoSuchException", "retry.defaults.retry-on",
						"No class 'com.example.NoSuchException' on the classpath"),
				Arguments.of("retry.policies.payments.no-retry-on=com.example.Missing",
						"retry.policies.payments.no-retry-on", "Use the fully qualified name of an exception class"),
				Arguments.of("retry.defaults.no-retry-on=java.lang.String", "retry.defaults.no-retry-on",
						"'java.lang.String' is not an exception type"),
				Arguments.of("retry.parking-lot= ", "retry.parking-lot", "needs a name"),
				Arguments.of("retry.parking-lot=amq.parking", "retry.parking-lot", "reserved by RabbitMQ"),
				Arguments.of("retry.parking-lot=" + longName, "retry.parking-lot", "at most 255 bytes"),
				Arguments.of("retry.headers.max-error-length=-1", "retry.headers.max-error-length",
						"Use zero or more characters"),
				Arguments.of("retry.headers.max-stack-trace-length=-1", "retry.headers.max-stack-trace-length",
						"Use zero or more characters"),
				Arguments.of("retry.publish.confirm-timeout=0s", "retry.publish.confirm-timeout",
						"Use a positive duration"),
				Arguments.of("retry.publish.confirm-timeout=-1s", "retry.publish.confirm-timeout",
						"Use a positive duration"),
				Arguments.of("retry.publish.failure-initial-pause=-1s", "retry.publish.failure-initial-pause",
						"Use a positive duration"),
				Arguments.of("retry.publish.failure-initial-pause=0s", "retry.publish.failure-initial-pause",
						"Use a positive duration"),
				Arguments.of("retry.publish.failure-max-pause=-1s", "retry.publish.failure-max-pause",
						"Use a positive duration"),
				Arguments.of("retry.topology.check-interval=-1s", "retry.topology.check-interval",
						"Use zero or a positive duration"),
				Arguments.of("retry.defaults.max-interval=36501d", "retry.defaults.max-interval",
						"at most 100 years"));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("durationsAsWritten")
	void invalidDurationIsShownAsTheUserWroteIt(String[] assignments, String property, String shown) {
		this.contextRunner.withPropertyValues(assignments).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("Property " + property + " with value '" + shown + "' is invalid")
				.hasMessageNotContaining("PT");
		});
	}

	static Stream<Arguments> durationsAsWritten() {
		return Stream.of(Arguments.of(new String[] { "retry.defaults.timeout=0s" }, "retry.defaults.timeout", "0s"),
				Arguments.of(new String[] { "retry.policies.payments.initial-interval=-1500ms" },
						"retry.policies.payments.initial-interval", "-1500ms"),
				Arguments.of(new String[] { "retry.defaults.delays[0]=10s", "retry.defaults.delays[1]=-2m" },
						"retry.defaults.delays", "[10s, -2m]"),
				Arguments.of(new String[] { "retry.tiers[0]=5s", "retry.tiers[1]=1s" }, "retry.tiers", "[5s, 1s]"),
				Arguments.of(new String[] { "retry.publish.confirm-timeout=0ms" }, "retry.publish.confirm-timeout",
						"0s"));
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void misspelledQueueTypeIsAnsweredWithTheValidValuesAsWritten(CapturedOutput output) {
		SpringApplication application = new SpringApplication(EmptyApplication.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		application.setDefaultProperties(Map.of("retry.queue-type", "quorom", "spring.rabbitmq.port", UNREACHABLE_PORT));
		assertThatException().isThrownBy(application::run);
		assertThat(output).contains("Failed to bind properties under 'retry.queue-type'")
			.contains("Value: \"quorom\"")
			.containsPattern("The following values are valid:\\s+classic\\s+quorum");
	}

	@Test
	void unknownQueueTypeFailsStartupNamingTheProperty() {
		this.contextRunner.withPropertyValues("retry.queue-type=stream")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("Failed to bind properties under 'retry.queue-type'"));
	}

	@Test
	void unknownPolicyNameFailsStartupNamingTheListenerAndThePolicy() {
		this.contextRunner.withPropertyValues("retry.policies.payments.max-retries=3")
			.withUserConfiguration(UnknownPolicyListener.class)
			.run(failsWith("UnknownPolicyListener#onOrder", "unknown policy 'paymnets'", "[payments]"));
	}

	@Test
	void unparsableDelayFailsStartupNamingTheListenerAndTheDelay() {
		this.contextRunner.withUserConfiguration(UnparsableDelayListener.class)
			.run(failsWith("UnparsableDelayListener#onOrder", "delay \"10 parsecs\" is not a duration"));
	}

	@Test
	void delayWithoutAUnitFailsStartupShowingBothReadings() {
		this.contextRunner.withUserConfiguration(UnitlessDelayListener.class)
			.run(failsWith("UnitlessDelayListener#onOrder", "delay \"10\" has no unit",
					"Write \"10ms\" for milliseconds or \"10s\" for seconds"));
	}

	@Test
	void negativeDelayFailsStartupNamingTheListenerAndTheDelay() {
		this.contextRunner.withUserConfiguration(NegativeDelayListener.class)
			.run(failsWith("NegativeDelayListener#onOrder", "delay \"-5s\" is not usable", "Use delays of zero or more"));
	}

	@Test
	void negativeMaxRetriesFailsStartupNamingTheListenerAndTheValue() {
		this.contextRunner.withUserConfiguration(NegativeMaxRetriesListener.class)
			.run(failsWith("NegativeMaxRetriesListener#onOrder", "maxRetries = -2 is not usable", "Or -1 (the default)"));
	}

	@Test
	void manualAckModeOnTheAnnotationFailsStartupPointingAtTheAnnotation() {
		this.contextRunner.withUserConfiguration(ManualAckListener.class)
			.run(failsWith("ManualAckListener#onOrder",
					"acknowledge mode MANUAL, set by @RabbitListener(ackMode = \"MANUAL\"), is not supported",
					"Remove ackMode = \"MANUAL\" from the @RabbitListener"));
	}

	@Test
	void manualAckModeFromThePropertyFailsStartupPointingAtTheProperty() {
		this.contextRunner.withPropertyValues("spring.rabbitmq.listener.simple.acknowledge-mode=manual")
			.withUserConfiguration(OrderListener.class)
			.run((context) -> {
				failsWith("OrderListener#onOrder", "acknowledge mode MANUAL, set by its container factory",
						"Remove spring.rabbitmq.listener.simple.acknowledge-mode")
					.accept(context);
				assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
					.hasMessageNotContaining("ackMode = ");
			});
	}

	@Test
	void noneAckModeFromTheDirectFactoryPropertyFailsStartupPointingAtTheProperty() {
		this.contextRunner
			.withPropertyValues("spring.rabbitmq.listener.type=direct",
					"spring.rabbitmq.listener.direct.acknowledge-mode=none")
			.withUserConfiguration(OrderListener.class)
			.run(failsWith("OrderListener#onOrder", "acknowledge mode NONE, set by its container factory",
					"Remove spring.rabbitmq.listener.direct.acknowledge-mode"));
	}

	@Test
	void transactedContainerFailsStartupNamingTheListener() {
		this.contextRunner.withUserConfiguration(TransactedListener.class)
			.run(failsWith("TransactedListener#onOrder", "transacted listener containers are not supported"));
	}

	@Test
	void noneAckModeFailsStartupNamingTheListener() {
		this.contextRunner.withUserConfiguration(NoAckListener.class)
			.run(failsWith("NoAckListener#onOrder",
					"acknowledge mode NONE, set by @RabbitListener(ackMode = \"NONE\"), is not supported"));
	}

	@Test
	void batchListenerFailsStartupNamingTheListener() {
		this.contextRunner.withUserConfiguration(BatchListener.class)
			.run(failsWith("BatchListener#onOrders", "batch listeners are not supported"));
	}

	@Test
	void consumerBatchContainerFailsStartupNamingTheListener() {
		this.contextRunner
			.withPropertyValues("spring.rabbitmq.listener.simple.consumer-batch-enabled=true",
					"spring.rabbitmq.listener.simple.batch-size=10")
			.withUserConfiguration(ConsumerBatchListener.class)
			.run(failsWith("ConsumerBatchListener#onOrders", "batch listeners are not supported"));
	}

	@Test
	void asynchronousListenerFailsStartupNamingTheListenerAndItsReturnType() {
		this.contextRunner.withUserConfiguration(AsyncListener.class)
			.run(failsWith("AsyncListener#onOrder", "asynchronous listeners (returning CompletableFuture)"));
	}

	@Test
	void retryableListenerWithoutRabbitListenerFailsStartup() {
		this.contextRunner.withUserConfiguration(NotARabbitListener.class)
			.run(failsWith("NotARabbitListener#onOrder", "there is no @RabbitListener"));
	}

	@Test
	void retryableListenerOnARabbitHandlerFailsStartup() {
		this.contextRunner.withUserConfiguration(AnnotatedHandlerListener.class)
			.run(failsWith("AnnotatedHandlerListener#onOrder", "@RabbitHandler method of a class-level @RabbitListener"));
	}

	@Test
	void blockingRetryInterceptorOnTheSimpleFactoryFailsStartup() {
		this.contextRunner.withPropertyValues("spring.rabbitmq.listener.simple.retry.enabled=true")
			.withUserConfiguration(OrderListener.class)
			.run(failsWith("OrderListener#onOrder", "blocking retry interceptor",
					"spring.rabbitmq.listener.simple.retry.enabled=false"));
	}

	@Test
	void blockingRetryInterceptorOnTheDirectFactoryFailsStartup() {
		this.contextRunner
			.withPropertyValues("spring.rabbitmq.listener.type=direct",
					"spring.rabbitmq.listener.direct.retry.enabled=true")
			.withUserConfiguration(OrderListener.class)
			.run(failsWith("OrderListener#onOrder", "blocking retry interceptor"));
	}

	@Test
	void listenerOfAFinalContainerFactoryFailsStartupInsteadOfRunningWithoutRetries() {
		this.contextRunner.withUserConfiguration(FinalFactoryConfiguration.class, FinalFactoryListener.class)
			.run(failsWith("FinalFactoryListener#onOrder", "not created by a container factory bean"));
	}

	@Test
	void failureAnalyzersAreRegistered() {
		List<FailureAnalyzer> analyzers = SpringFactoriesLoader.forDefaultResourceLocation(getClass().getClassLoader())
			.load(FailureAnalyzer.class, null, (factoryType, implementationName, failure) -> {
			});
		assertThat(analyzers).hasAtLeastOneElementOfType(RetryConfigurationFailureAnalyzer.class)
			.hasAtLeastOneElementOfType(RetryTopologyConflictFailureAnalyzer.class);
	}

	private static ContextConsumer<AssertableApplicationContext> failsWith(String listener, String... problems) {
		return (context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			assertThat(NestedExceptionUtils.getMostSpecificCause(failure))
				.isInstanceOf(RetryableListenerConfigurationException.class)
				.hasMessageContaining(listener)
				.hasMessageContainingAll(problems);
			FailureAnalysis analysis = new RetryConfigurationFailureAnalyzer().analyze(failure);
			assertThat(analysis).isNotNull();
			assertThat(analysis.getDescription()).startsWith("@RetryableListener on ")
				.contains(listener)
				.contains(problems[0]);
			assertThat(analysis.getAction()).isNotBlank();
			assertThat(analysis.getCause()).isInstanceOf(RetryableListenerConfigurationException.class);
		};
	}

	private static Object listenerOf(AssertableApplicationContext context, String id) {
		AbstractMessageListenerContainer container = (AbstractMessageListenerContainer) context
			.getBean(RabbitListenerEndpointRegistry.class)
			.getListenerContainer(id);
		assertThat(container).as("container %s", id).isNotNull();
		return container.getMessageListener();
	}

	/**
	 * What the admin declares once the topology has been checked against the broker.
	 */
	private static RetryDeclarables checked(AssertableApplicationContext context) {
		return new RetryDeclarables(context.getBean(RetryTopology.class), () -> true);
	}

	private static <T extends Declarable> List<T> declared(RetryDeclarables declarables, Class<T> type) {
		return declarables.getDeclarables().stream().filter(type::isInstance).map(type::cast).toList();
	}

	private static List<String> queueNames(RetryDeclarables declarables) {
		return declared(declarables, Queue.class).stream().map(Queue::getName).toList();
	}

	private static Queue queue(RetryDeclarables declarables, String name) {
		return declared(declarables, Queue.class)
			.stream()
			.filter((queue) -> queue.getName().equals(name))
			.findFirst()
			.orElseThrow(() -> new AssertionError("No queue " + name));
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ RabbitAutoConfiguration.class, TieredRetryAutoConfiguration.class })
	static class EmptyApplication {

	}

	@Configuration(proxyBeanMethods = false)
	static class UserTopologyConfiguration {

		@Bean
		RetryTopology userTopology() {
			return new RetryTopology(TierLadder.of(List.of(Duration.ofSeconds(2), Duration.ofSeconds(4))),
					QueueType.CLASSIC, "user.parking-lot");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserListenerPoliciesConfiguration {

		@Bean
		ListenerPolicies userPolicies() {
			return new ListenerPolicies(PolicyLayer.EMPTY, Map.of());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserForwarderConfiguration {

		@Bean
		MessageForwarder userForwarder(
				@Qualifier(TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY) ConnectionFactory publisher,
				RetryTopology topology) {
			return TestForwarding.on(publisher, Duration.ofSeconds(1), topology).forwarder();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserRegistryConfiguration {

		@Bean
		RetryableListenerRegistry userRegistry() {
			return new RetryableListenerRegistry();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserPublisherConnectionFactoryConfiguration {

		@Bean(name = TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY, defaultCandidate = false)
		CachingConnectionFactory userPublisherConnectionFactory() {
			CachingConnectionFactory factory = new CachingConnectionFactory("publisher.example.com");
			factory.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.SIMPLE);
			return factory;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UnconfirmedPublisherConnectionFactoryConfiguration {

		@Bean(name = TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY, defaultCandidate = false)
		CachingConnectionFactory userPublisherConnectionFactory() {
			return new CachingConnectionFactory("publisher.example.com");
		}

	}

	record ConnectionFactoryConsumer(ConnectionFactory connectionFactory) {
	}

	@Configuration(proxyBeanMethods = false)
	static class ConnectionFactoryConsumerConfiguration {

		@Bean
		ConnectionFactoryConsumer connectionFactoryConsumer(ConnectionFactory connectionFactory) {
			return new ConnectionFactoryConsumer(connectionFactory);
		}

	}

	static final class FinalContainerFactory extends SimpleRabbitListenerContainerFactory {

	}

	@Configuration(proxyBeanMethods = false)
	static class FinalFactoryConfiguration {

		@Bean
		FinalContainerFactory finalFactory(ConnectionFactory connectionFactory) {
			FinalContainerFactory factory = new FinalContainerFactory();
			factory.setConnectionFactory(connectionFactory);
			factory.setAutoStartup(false);
			return factory;
		}

	}

	static class OrderListener {

		@RabbitListener(id = "orders", queues = "orders")
		@RetryableListener
		public void onOrder(String order) {
		}

	}

	static class InvoiceListener {

		@RabbitListener(id = "invoices", queues = "invoices")
		@RetryableListener(maxRetries = 1)
		public void onInvoice(String invoice) {
		}

	}

	static class PlainListener {

		@RabbitListener(id = "plain", queues = "plain")
		public void onMessage(String message) {
		}

	}

	static class PaymentListener {

		@RabbitListener(id = "payments", queues = "payments")
		@RetryableListener(policy = "payments", maxRetries = 2)
		public void onPayment(String payment) {
		}

	}

	@RabbitListener(id = "class-level", queues = "class-level")
	@RetryableListener
	static class ClassLevelListener {

		@RabbitHandler
		public void onText(String text) {
		}

	}

	@RabbitListener(id = "annotated-handler", queues = "annotated-handler")
	static class AnnotatedHandlerListener {

		@RabbitHandler
		@RetryableListener
		public void onOrder(String order) {
		}

	}

	static class UnknownPolicyListener {

		@RabbitListener(queues = "orders")
		@RetryableListener(policy = "paymnets")
		public void onOrder(String order) {
		}

	}

	static class UnparsableDelayListener {

		@RabbitListener(queues = "orders")
		@RetryableListener(delays = { "10s", "10 parsecs" })
		public void onOrder(String order) {
		}

	}

	static class UnitlessDelayListener {

		@RabbitListener(queues = "orders")
		@RetryableListener(delays = { "10", "1h" })
		public void onOrder(String order) {
		}

	}

	static class NegativeDelayListener {

		@RabbitListener(queues = "orders")
		@RetryableListener(delays = "-5s")
		public void onOrder(String order) {
		}

	}

	static class NegativeMaxRetriesListener {

		@RabbitListener(queues = "orders")
		@RetryableListener(maxRetries = -2)
		public void onOrder(String order) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class TransactedListener {

		@Bean
		static SimpleRabbitListenerContainerFactory transactedFactory(ConnectionFactory connectionFactory) {
			SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
			factory.setConnectionFactory(connectionFactory);
			factory.setChannelTransacted(true);
			factory.setAutoStartup(false);
			return factory;
		}

		@RabbitListener(queues = "orders", containerFactory = "transactedFactory")
		@RetryableListener
		void onOrder(String order) {
		}

	}

	static class ManualAckListener {

		@RabbitListener(queues = "orders", ackMode = "MANUAL")
		@RetryableListener
		public void onOrder(String order) {
		}

	}

	static class NoAckListener {

		@RabbitListener(queues = "orders", ackMode = "NONE")
		@RetryableListener
		public void onOrder(String order) {
		}

	}

	static class BatchListener {

		@RabbitListener(queues = "orders", batch = "true")
		@RetryableListener
		public void onOrders(List<String> orders) {
		}

	}

	static class ConsumerBatchListener {

		@RabbitListener(queues = "orders")
		@RetryableListener
		public void onOrders(List<String> orders) {
		}

	}

	static class AsyncListener {

		@RabbitListener(queues = "orders")
		@RetryableListener
		public CompletableFuture<Void> onOrder(String order) {
			return CompletableFuture.completedFuture(null);
		}

	}

	static class NotARabbitListener {

		@RetryableListener
		public void onOrder(String order) {
		}

	}

	static class FinalFactoryListener {

		@RabbitListener(queues = "orders", containerFactory = "finalFactory")
		@RetryableListener
		public void onOrder(String order) {
		}

	}

}
