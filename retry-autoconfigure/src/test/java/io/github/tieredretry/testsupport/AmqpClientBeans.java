package io.github.tieredretry.testsupport;

import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;

import org.springframework.amqp.rabbitmq.client.AmqpConnectionFactory;
import org.springframework.amqp.rabbitmq.client.SingleAmqpConnectionFactory;
import org.springframework.amqp.rabbitmq.client.config.RabbitAmqpListenerContainerFactory;
import org.springframework.boot.amqp.autoconfigure.RabbitConnectionDetails;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * What an application of the RabbitMQ AMQP 1.0 client declares itself (Spring Boot 4.1
 * auto-configures none of it), from Boot's connection details: the client's
 * {@link Environment}, a connection factory and the container factory
 * {@code amqpContainerFactory}. Property {@code test.amqp.initial-credits} sets the
 * containers' credits (the client's default, 100, unless set). Nothing connects before a
 * container starts.
 */
@Configuration(proxyBeanMethods = false)
public class AmqpClientBeans {

	@Bean(destroyMethod = "close")
	Environment amqpEnvironment(RabbitConnectionDetails details) {
		RabbitConnectionDetails.Address address = details.getFirstAddress();
		return new AmqpEnvironmentBuilder().connectionSettings()
			.host(address.host())
			.port(address.port())
			.username(details.getUsername())
			.password(details.getPassword())
			.environmentBuilder()
			.build();
	}

	@Bean
	SingleAmqpConnectionFactory amqpConnectionFactory(Environment environment) {
		return new SingleAmqpConnectionFactory(environment);
	}

	@Bean
	RabbitAmqpListenerContainerFactory amqpContainerFactory(AmqpConnectionFactory connectionFactory,
			org.springframework.core.env.Environment environment) {
		RabbitAmqpListenerContainerFactory factory = new RabbitAmqpListenerContainerFactory(connectionFactory);
		Integer credits = environment.getProperty("test.amqp.initial-credits", Integer.class);
		if (credits != null) {
			factory.setContainerCustomizer((container) -> container.setInitialCredits(credits));
		}
		return factory;
	}

}
