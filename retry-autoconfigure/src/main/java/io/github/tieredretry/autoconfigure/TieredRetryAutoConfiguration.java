package io.github.tieredretry.autoconfigure;

import java.time.Clock;
import java.time.Duration;

import com.rabbitmq.client.Channel;
import io.github.tieredretry.internal.breaker.ListenerBreakers;
import io.github.tieredretry.internal.delivery.AsyncAttempts;
import io.github.tieredretry.internal.delivery.DeliveryCapture;
import io.github.tieredretry.internal.delivery.ListenerRuntime;
import io.github.tieredretry.internal.event.RetryEventPublisher;
import io.github.tieredretry.internal.forwarding.ConfirmedPublisher;
import io.github.tieredretry.internal.forwarding.MessageForwarder;
import io.github.tieredretry.internal.forwarding.PublisherBlockedState;
import io.github.tieredretry.internal.forwarding.RetryExecutors;
import io.github.tieredretry.internal.install.DeclaredQueues;
import io.github.tieredretry.internal.install.ListenerPolicies;
import io.github.tieredretry.internal.install.RetryBackends;
import io.github.tieredretry.internal.install.RetryShutdown;
import io.github.tieredretry.internal.install.RetryableListenerBeanPostProcessor;
import io.github.tieredretry.internal.install.RetryableListenerInstaller;
import io.github.tieredretry.internal.install.RetryableListenerVerifier;
import io.github.tieredretry.internal.settlement.ForwardSenders;
import io.github.tieredretry.internal.topology.RetryDeclarables;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.internal.topology.RetryTopologyDeclarer;
import io.github.tieredretry.internal.topology.RetryTopologyGuardian;
import io.github.tieredretry.internal.topology.RetryTopologyInitializer;
import io.github.tieredretry.internal.topology.WorkQueueCheck;
import io.github.tieredretry.listener.ListenerGates;
import io.github.tieredretry.listener.RetryAfterResolver;
import io.github.tieredretry.listener.RetryFailureClassifier;
import io.github.tieredretry.listener.RetryableListenerRegistry;
import io.github.tieredretry.observation.RetryObservations;
import org.apache.commons.logging.LogFactory;

import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.rabbit.annotation.EnableRabbit;
import org.springframework.amqp.rabbit.connection.AbstractConnectionFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.amqp.autoconfigure.CachingConnectionFactoryConfigurer;
import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.core.env.Environment;
import org.springframework.core.io.ResourceLoader;

/**
 * Auto-configuration of tiered, non-blocking retries for {@code @RetryableListener}
 * listeners: the retry topology, confirmed forwarding on a publisher connection of its
 * own, and the wrapping of retryable listener containers.
 */
@AutoConfiguration(after = RabbitAutoConfiguration.class)
@ConditionalOnClass({ RabbitTemplate.class, EnableRabbit.class, Channel.class })
@ConditionalOnBooleanProperty(name = "retry.enabled", matchIfMissing = true)
@ConditionalOnBean(ConnectionFactory.class)
@EnableConfigurationProperties(RetryProperties.class)
@ImportRuntimeHints(TieredRetryRuntimeHints.class)
public final class TieredRetryAutoConfiguration {

	/** Name of the connection factory that forwards failed messages. */
	public static final String PUBLISHER_CONNECTION_FACTORY = "tieredRetryPublisherConnectionFactory";

	@Bean
	static RetryableListenerBeanPostProcessor retryableListenerBeanPostProcessor(
			ObjectProvider<RetryableListenerInstaller> installer, ObjectProvider<RetryableListenerRegistry> registry) {
		return new RetryableListenerBeanPostProcessor(installer, registry);
	}

	@Bean
	RetryableListenerRegistry retryableListenerRegistry() {
		return new RetryableListenerRegistry();
	}

	@Bean
	RetryTopology retryTopology(RetryProperties properties, Environment environment) {
		// Every bean of the starter needs the topology: the keys as written are checked
		// before any of them is used.
		RetryPropertyNames.check(environment);
		RetryTopology topology = new RetryTopology(RetrySettings.tiers(properties), properties.getQueueType(),
				RetrySettings.parkingLot(properties, environment.getProperty("spring.application.name")));
		if (properties.getParkingLot() == null && topology.isShared()) {
			LogFactory.getLog(RetryTopology.class)
				.info("Parked messages go to the shared parking lot '" + topology.parkingLot()
						+ "': spring.application.name is not set. Other applications on this virtual host that "
						+ "park there see this application's parked messages; set spring.application.name "
						+ "(or retry.parking-lot) for a parking lot of its own.");
		}
		return topology;
	}

	@Bean
	RetryDeclarables retryDeclarables(RetryTopology topology, RetryTopologyDeclarer declarer) {
		return new RetryDeclarables(topology, declarer::isChecked);
	}

	@Bean
	ListenerPolicies retryListenerPolicies(RetryProperties properties, ResourceLoader resourceLoader) {
		return RetrySettings.policies(properties, resourceLoader.getClassLoader());
	}

	@Bean(name = PUBLISHER_CONNECTION_FACTORY, defaultCandidate = false)
	@ConditionalOnMissingBean(name = PUBLISHER_CONNECTION_FACTORY)
	CachingConnectionFactory tieredRetryPublisherConnectionFactory(ConnectionFactory connectionFactory,
			ObjectProvider<CachingConnectionFactoryConfigurer> configurer, BeanFactory beanFactory,
			RetryProperties properties, ObjectProvider<RetryPublisherConnectionFactoryCustomizer> customizers) {
		return PublisherConnectionFactories.create(connectionFactory, configurer.getIfAvailable(), beanFactory,
				RetrySettings.publish(properties).getConfirmTimeout(), customizers.orderedStream().toList());
	}

	@Bean
	RetryTopologyDeclarer retryTopologyDeclarer(RetryTopology topology, ObjectProvider<AmqpAdmin> admin,
			@Qualifier(PUBLISHER_CONNECTION_FACTORY) ConnectionFactory publisherConnectionFactory) {
		// Inspected on the starter's own connection: the application's would make its
		// admin declare at once.
		return new RetryTopologyDeclarer(topology, admin.getIfUnique(), publisherConnectionFactory);
	}

	@Bean
	RetryTopologyInitializer retryTopologyInitializer(RetryTopologyDeclarer declarer, RetryTopology topology,
			ConnectionFactory connectionFactory) {
		return new RetryTopologyInitializer(declarer, topology, connectionFactory);
	}

	@Bean(destroyMethod = "close")
	RetryExecutors retryExecutors() {
		return new RetryExecutors();
	}

	@Bean
	RetryEventPublisher retryEventPublisher(ApplicationEventPublisher events, RetryExecutors executors) {
		return new RetryEventPublisher(events, executors.events());
	}

	@Bean
	PublisherBlockedState retryPublisherBlockedState(
			@Qualifier(PUBLISHER_CONNECTION_FACTORY) AbstractConnectionFactory publisherConnectionFactory,
			RetryEventPublisher events) {
		PublisherBlockedState state = new PublisherBlockedState(Clock.systemUTC(), events::publish);
		publisherConnectionFactory.addConnectionListener(state);
		return state;
	}

	@Bean
	RetryTopologyGuardian retryTopologyGuardian(RetryTopologyDeclarer declarer, RetryProperties properties,
			RetryExecutors executors, PublisherBlockedState blockedState) {
		return new RetryTopologyGuardian(declarer, RetrySettings.topologyCheckInterval(properties),
				executors.maintenance(), blockedState::isBlocked);
	}

	@Bean(destroyMethod = "close")
	ConfirmedPublisher retryConfirmedPublisher(
			@Qualifier(PUBLISHER_CONNECTION_FACTORY) AbstractConnectionFactory publisherConnectionFactory,
			RetryProperties properties, RetryExecutors executors, PublisherBlockedState blockedState) {
		if (!publisherConnectionFactory.isSimplePublisherConfirms()) {
			throw new IllegalStateException("The connection factory '" + PUBLISHER_CONNECTION_FACTORY
					+ "' must use publisher confirm type SIMPLE (setPublisherConfirmType(ConfirmType.SIMPLE)), "
					+ "also after every RetryPublisherConnectionFactoryCustomizer: tiered retries wait for the "
					+ "broker's confirm of " + "every forward before acking a message.");
		}
		if (publisherConnectionFactory instanceof CachingConnectionFactory caching
				&& caching.getCacheMode() == CachingConnectionFactory.CacheMode.CONNECTION) {
			throw new IllegalStateException("The connection factory '" + PUBLISHER_CONNECTION_FACTORY
					+ "' must use cache mode CHANNEL, also after every RetryPublisherConnectionFactoryCustomizer: "
					+ "tiered retries publish on one long-lived connection.");
		}
		return new ConfirmedPublisher(publisherConnectionFactory, RetrySettings.publish(properties).getConfirmTimeout(),
				executors, blockedState);
	}

	@Bean
	MessageForwarder retryMessageForwarder(ConfirmedPublisher publisher, RetryTopology topology,
			RetryTopologyDeclarer declarer, RetryExecutors executors) {
		return new MessageForwarder(publisher, topology, declarer::declare, executors);
	}

	@Bean
	RetryableListenerInstaller retryableListenerInstaller(ListenerPolicies policies, RetryTopology topology,
			MessageForwarder forwarder, RetryProperties properties, RetryExecutors executors,
			RetryEventPublisher events, RetryableListenerRegistry registry, ListenerGates gates,
			ObjectProvider<RetryFailureClassifier> classifiers, ObjectProvider<RetryAfterResolver> retryAfterResolvers,
			ObjectProvider<RetryObservations> observations, RetryBackends backends, ListableBeanFactory beanFactory) {
		RetryProperties.Publish publish = RetrySettings.publish(properties);
		RetryObservations observed = observations.getIfAvailable(() -> RetryObservations.DISABLED);
		Duration asyncAttemptTimeout = RetrySettings.asyncAttemptTimeout(properties);
		ForwardSenders senders = new ForwardSenders(forwarder, executors, events, publish.getFailureInitialPause(),
				publish.getFailureMaxPause(), observed);
		ListenerRuntime runtime = new ListenerRuntime(new DeliveryCapture(),
				new AsyncAttempts(executors, asyncAttemptTimeout, observed), classifiers.orderedStream().toList(),
				retryAfterResolvers.orderedStream().toList(), RetrySettings.headers(properties), topology.parkingLot(),
				Clock.systemUTC());
		return new RetryableListenerInstaller(policies, topology, senders, runtime, registry, gates, backends,
				new DeclaredQueues(beanFactory, properties.getBroker().isDeclareQueueArguments()), asyncAttemptTimeout);
	}

	@Bean
	RetryBackends retryBackends(ConnectionFactory connectionFactory,
			@Qualifier(PUBLISHER_CONNECTION_FACTORY) ConnectionFactory publisherConnectionFactory,
			ListableBeanFactory beanFactory) {
		// Chosen on the starter's own connection: the application's would make its admin
		// declare the queues before their arguments were compared.
		return new RetryBackends(connectionFactory, publisherConnectionFactory,
				new WorkQueueCheck(publisherConnectionFactory, beanFactory));
	}

	@Bean
	@ConditionalOnMissingBean
	ListenerGates retryListenerGates() {
		// Resilience4j is missing (else BreakerConfiguration gives ListenerBreakers): no
		// breakers.
		return ListenerGates.WITHOUT_BREAKERS;
	}

	/** Circuit breakers per listener, when Resilience4j is on the class path. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "io.github.resilience4j.circuitbreaker.CircuitBreaker")
	static class BreakerConfiguration {

		@Bean
		ListenerBreakers retryListenerBreakers(RetryEventPublisher events) {
			return new ListenerBreakers(Clock.systemUTC(), events::publish);
		}

	}

	// Depends on the connection factory (an argument, never used), so that it stops
	// first: it gives the consumer channels' messages back before the connection
	// closes.
	@Bean
	RetryShutdown retryShutdown(ApplicationContext context, RetryableListenerInstaller installer,
			ConnectionFactory connectionFactory) {
		return new RetryShutdown(context, installer);
	}

	@Bean
	RetryableListenerVerifier retryableListenerVerifier(RetryableListenerRegistry registry) {
		return new RetryableListenerVerifier(registry);
	}

}
