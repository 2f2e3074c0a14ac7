package io.github.tieredretry.autoconfigure;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
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
			CachingConnectionFactory publisher = context
				.getBean(TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY, CachingConnectionFactory.class);
			assertThat(publisher.getHost()).isEqualTo("publisher.example.com");
			// The application's own connection factory is still Spring Boot's.
			assertThat(context.getBean("rabbitConnectionFactory")).isNotSameAs(publisher);
		});
	}

	@Test
	void customizersRunInOrderAfterTheStartersSettings() {
		this.contextRunner.withUserConfiguration(OrderedCustomizers.class).run((context) -> {
			assertThat(context).hasNotFailed();
			CachingConnectionFactory publisher = context
				.getBean(TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY, CachingConnectionFactory.class);
			// 40, then doubled: the @Order(1) customizer ran first.
			assertThat(publisher.getChannelCacheSize()).isEqualTo(80);
			// It saw the starter's settings already applied.
			assertThat(context.getBean(OrderedCustomizers.class).confirmsSeen).isTrue();
			assertThat(publisher.isSimplePublisherConfirms()).isTrue();
		});
	}

	@Test
	void customizerThatTurnsConfirmsOffFailsStartup() {
		this.contextRunner
			.withBean(RetryPublisherConnectionFactoryCustomizer.class,
					() -> (factory) -> factory.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.NONE))
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining(TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY)
				.hasMessageContaining("SIMPLE")
				.hasMessageContaining("RetryPublisherConnectionFactoryCustomizer"));
	}

	@Test
	void customizerThatOpensAConnectionPerForwardFailsStartup() {
		this.contextRunner
			.withBean(RetryPublisherConnectionFactoryCustomizer.class,
					() -> (factory) -> factory.setCacheMode(CachingConnectionFactory.CacheMode.CONNECTION))
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("cache mode CHANNEL"));
	}

	@Test
	void publisherConnectionFactoryUsesSimpleConfirmsWhateverTheApplicationSets() {
		for (String confirmType : List.of("none", "simple", "correlated")) {
			this.contextRunner
				.withPropertyValues("spring.rabbitmq.publisher-confirm-type=" + confirmType,
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
				CachingConnectionFactory publisher = context
					.getBean(TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY, CachingConnectionFactory.class);
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
