package io.github.tieredretry.autoconfigure;

import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for the connection factory that forwards failed messages
 * ({@link PublisherConnectionFactories}).
 */
class PublisherConnectionFactoriesTests extends AutoConfigurationTestSupport {

	@Test
	void userPublisherConnectionFactoryReplacesOurs() {
		this.contextRunner.withUserConfiguration(UserPublisherConnectionFactoryConfiguration.class).run((context) -> {
			assertThat(context).hasNotFailed();
			CachingConnectionFactory publisher = publisherOf(context);
			assertThat(publisher.getHost()).isEqualTo("publisher.example.com");
			// The application's own connection factory is still Spring Boot's.
			assertThat(applicationOf(context)).isNotSameAs(publisher);
		});
	}

	@Test
	void customizersRunInOrderAfterTheStartersSettings() {
		this.contextRunner.withUserConfiguration(OrderedCustomizers.class).run((context) -> {
			assertThat(context).hasNotFailed();
			CachingConnectionFactory publisher = publisherOf(context);
			// 40, then doubled: the @Order(1) customizer ran first.
			assertThat(publisher.getChannelCacheSize()).isEqualTo(80);
			// It saw the starter's settings already applied.
			assertThat(context.getBean(OrderedCustomizers.class).confirmsSeen).isTrue();
			assertThat(publisher.isSimplePublisherConfirms()).isTrue();
		});
	}

	@Test
	void customizerThatTurnsConfirmsOffFailsStartup() {
		assertThatStartupFailure(
				withCustomizer((factory) -> factory.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.NONE)))
			.hasMessageContaining(TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY)
			.hasMessageContaining("SIMPLE")
			.hasMessageContaining("RetryPublisherConnectionFactoryCustomizer");
	}

	@Test
	void customizerThatOpensAConnectionPerForwardFailsStartup() {
		assertThatStartupFailure(
				withCustomizer((factory) -> factory.setCacheMode(CachingConnectionFactory.CacheMode.CONNECTION)))
			.hasMessageContaining("cache mode CHANNEL");
	}

	@Test
	void publisherConnectionFactoryUsesSimpleConfirmsWhateverTheApplicationSets() {
		for (String confirmType : List.of("none", "simple", "correlated")) {
			this.contextRunner
				.withPropertyValues("spring.rabbitmq.publisher-confirm-type=" + confirmType,
						"spring.rabbitmq.publisher-returns=true")
				.run((context) -> {
					CachingConnectionFactory publisher = publisherOf(context);
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
			CachingConnectionFactory application = applicationOf(context);
			assertThat(application.isPublisherConfirms()).isTrue();
			assertThat(application.isSimplePublisherConfirms()).isFalse();
		});
	}

	@Test
	void userDefinedPublisherConnectionFactoryWithoutSimpleConfirmsFailsStartup() {
		assertThatStartupFailure(
				this.contextRunner.withUserConfiguration(UnconfirmedPublisherConnectionFactoryConfiguration.class))
			.hasMessageContaining(TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY)
			.hasMessageContaining("SIMPLE");
	}

	@Test
	void publisherConnectionFactoryConnectsToTheApplicationsBrokerOnAConnectionOfItsOwn() {
		this.contextRunner.withPropertyValues("spring.rabbitmq.virtual-host=/orders", "spring.rabbitmq.username=shop")
			.run((context) -> {
				CachingConnectionFactory application = applicationOf(context);
				CachingConnectionFactory publisher = publisherOf(context);
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

	/**
	 * The connection factory the starter forwards on.
	 */
	private static CachingConnectionFactory publisherOf(ApplicationContext context) {
		return context.getBean(TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY,
				CachingConnectionFactory.class);
	}

	/**
	 * The application's own connection factory: Spring Boot's.
	 */
	private static CachingConnectionFactory applicationOf(ApplicationContext context) {
		return context.getBean("rabbitConnectionFactory", CachingConnectionFactory.class);
	}

	private ApplicationContextRunner withCustomizer(RetryPublisherConnectionFactoryCustomizer customizer) {
		return this.contextRunner.withBean(RetryPublisherConnectionFactoryCustomizer.class, () -> customizer);
	}

	/**
	 * Starts the application, asserts that it failed, and returns the assertion on the
	 * root cause.
	 */
	private static AbstractThrowableAssert<?, ? extends Throwable> assertThatStartupFailure(
			ApplicationContextRunner runner) {
		AtomicReference<Throwable> failure = new AtomicReference<>();
		runner.run((context) -> {
			assertThat(context).hasFailed();
			failure.set(context.getStartupFailure());
		});
		return assertThat(failure.get()).rootCause();
	}

	@Configuration(proxyBeanMethods = false)
	static class OrderedCustomizers {

		volatile boolean confirmsSeen;

		@Bean
		@Order(2)
		RetryPublisherConnectionFactoryCustomizer second() {
			return (factory) -> factory.setChannelCacheSize(factory.getChannelCacheSize() * 2);
		}

		@Bean
		@Order(1)
		RetryPublisherConnectionFactoryCustomizer first() {
			return (factory) -> {
				this.confirmsSeen = factory.isSimplePublisherConfirms();
				factory.setChannelCacheSize(40);
			};
		}

	}

}
