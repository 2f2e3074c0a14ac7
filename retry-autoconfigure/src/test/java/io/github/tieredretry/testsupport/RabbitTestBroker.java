package io.github.tieredretry.testsupport;

import org.testcontainers.rabbitmq.RabbitMQContainer;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Test configuration that connects a Spring Boot test to the {@link TestBroker}: through
 * {@code @ServiceConnection} when the broker is a Testcontainers container, otherwise
 * through {@code spring.rabbitmq.*} properties. Use with
 * {@code @ContextConfiguration(initializers = RabbitTestBroker.Initializer.class)} and
 * {@code @Import(RabbitTestBroker.class)}, or simply through
 * {@link RabbitIntegrationTest}.
 */
@TestConfiguration(proxyBeanMethods = false)
public class RabbitTestBroker {

	@Bean(destroyMethod = "")
	@ServiceConnection
	@Conditional(ContainerBroker.class)
	static RabbitMQContainer rabbitMQContainer() {
		return TestBroker.get().container();
	}

	static class ContainerBroker implements Condition {

		@Override
		public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
			return TestBroker.get().isContainer();
		}

	}

	/**
	 * Resolves the broker before the context starts (failing clearly when there is none),
	 * and points {@code spring.rabbitmq.*} at it when it is not a container.
	 */
	public static class Initializer implements ApplicationContextInitializer<ConfigurableApplicationContext> {

		@Override
		public void initialize(ConfigurableApplicationContext context) {
			TestBroker broker = TestBroker.get();
			if (!broker.isContainer()) {
				java.util.Map<String, Object> properties = new java.util.LinkedHashMap<>();
				for (String pair : broker.springProperties()) {
					int separator = pair.indexOf('=');
					properties.put(pair.substring(0, separator), pair.substring(separator + 1));
				}
				context.getEnvironment().getPropertySources().addLast(new MapPropertySource("testBroker", properties));
			}
		}

	}

}
