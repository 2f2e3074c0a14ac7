package io.github.tieredretry.autoconfigure;

import java.lang.reflect.Field;

import org.junit.jupiter.api.Test;

import org.springframework.amqp.listener.adapter.HandlerAdapter;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.adapter.MessagingMessageListenerAdapter;
import org.springframework.amqp.rabbitmq.client.listener.RabbitAmqpListenerContainer;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.security.web.csrf.CsrfToken;
import org.springframework.util.ReflectionUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link TieredRetryRuntimeHints}: every field the starter reads reflectively
 * exists under the name registered (a renamed field in Spring AMQP fails here, not in a
 * native image), and the console's resources and the CSRF token's accessors are
 * registered.
 */
class TieredRetryRuntimeHintsTests {

	private final RuntimeHints hints = new RuntimeHints();

	TieredRetryRuntimeHintsTests() {
		new TieredRetryRuntimeHints().registerHints(this.hints, getClass().getClassLoader());
	}

	@Test
	void fieldsOfSpringAmqpThatTheStarterReadsAreRegistered() {
		assertFieldRegistered(AbstractMessageListenerContainer.class, "prefetchCount");
		assertFieldRegistered(AbstractMessageListenerContainer.class, "shutdownTimeout");
		assertFieldRegistered(AbstractMessageListenerContainer.class, "connectionFactory");
		assertFieldRegistered(MessagingMessageListenerAdapter.class, "handlerAdapter");
		assertFieldRegistered(HandlerAdapter.class, "invokerHandlerMethod");
		assertFieldRegistered(HandlerAdapter.class, "delegatingHandler");
		for (String name : new String[] { "connectionFactory", "afterReceivePostProcessors", "initialCredits",
				"batchSize", "queues" }) {
			assertFieldRegistered(RabbitAmqpListenerContainer.class, name);
		}
	}

	@Test
	void consoleResourcesAreRegistered() {
		for (String file : new String[] { "index.html", "console.js", "console.css" }) {
			String path = "io/github/tieredretry/internal/console/static/" + file;
			assertThat(getClass().getClassLoader().getResource(path)).as(path).isNotNull();
			assertThat(RuntimeHintsPredicates.resource().forResource(path)).as(path).accepts(this.hints);
		}
	}

	@Test
	void csrfTokenAccessorsAreRegistered() throws NoSuchMethodException {
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(CsrfToken.class.getMethod("getHeaderName")))
			.accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(CsrfToken.class.getMethod("getToken")))
			.accepts(this.hints);
	}

	// The field the starter reads, found the way DirectFieldAccessor finds it (declared
	// by the class or a superclass), must be registered on its declaring class.
	private void assertFieldRegistered(Class<?> type, String name) {
		Field field = ReflectionUtils.findField(type, name);
		assertThat(field).as("field %s of %s", name, type.getName()).isNotNull();
		assertThat(RuntimeHintsPredicates.reflection().onFieldAccess(field)).as("hint for %s", field)
			.accepts(this.hints);
	}

}
