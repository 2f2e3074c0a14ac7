package io.github.tieredretry.autoconfigure;

import org.jspecify.annotations.Nullable;

import org.springframework.amqp.listener.adapter.HandlerAdapter;
import org.springframework.amqp.rabbit.connection.RabbitAccessor;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.adapter.MessagingMessageListenerAdapter;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;

/**
 * What the starter reads reflectively or as resources, for an application processed ahead
 * of time (and a native image): the operations console's static files; the fields of
 * Spring AMQP's containers and adapters that have no getter (the prefetch, the shutdown
 * timeout, the connection factory, the adapter's handler, and the AMQP 1.0 container's
 * queues, credits, batch size and post-processors); the properties of Spring Security's
 * CSRF token, read without depending on Spring Security. Exception classes named in
 * {@code retry.*.retry-on} and {@code no-retry-on} are the application's: a native image
 * needs them registered by the application.
 */
class TieredRetryRuntimeHints implements RuntimeHintsRegistrar {

	static final String CONSOLE_RESOURCES = "io/github/tieredretry/internal/console/static/*";

	static final String AMQP_CLIENT_CONTAINER = "org.springframework.amqp.rabbitmq.client.listener."
			+ "RabbitAmqpListenerContainer";

	static final String CSRF_TOKEN = "org.springframework.security.web.csrf.CsrfToken";

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		hints.resources().registerPattern(CONSOLE_RESOURCES);
		hints.reflection()
			.registerType(AbstractMessageListenerContainer.class,
					(type) -> type.withField("prefetchCount").withField("shutdownTimeout"))
			.registerType(RabbitAccessor.class, (type) -> type.withField("connectionFactory"))
			.registerType(MessagingMessageListenerAdapter.class, (type) -> type.withField("handlerAdapter"))
			.registerType(HandlerAdapter.class,
					(type) -> type.withField("invokerHandlerMethod").withField("delegatingHandler"))
			.registerType(TypeReference.of(AMQP_CLIENT_CONTAINER),
					(type) -> type.onReachableType(TypeReference.of(AMQP_CLIENT_CONTAINER))
						.withField("connectionFactory")
						.withField("afterReceivePostProcessors")
						.withField("initialCredits")
						.withField("batchSize")
						.withField("queues"))
			.registerType(TypeReference.of(CSRF_TOKEN), (type) -> type.onReachableType(TypeReference.of(CSRF_TOKEN))
				.withMembers(MemberCategory.INVOKE_PUBLIC_METHODS));
	}

}
