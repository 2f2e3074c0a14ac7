package io.github.tieredretry.observation;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletionException;

import com.rabbitmq.client.AMQP;
import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.support.micrometer.RabbitMessageReceiverContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RetryObservations} and the default conventions, without a broker or a
 * tracer.
 */
class RetryObservationsTests {

	private static final AMQP.BasicProperties RECEIVED = new AMQP.BasicProperties.Builder().messageId("order-1")
		.headers(Map.of("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "b3",
				"80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1", "tenant", "acme"))
		.build();

	private final Recording recording = new Recording();

	@Test
	void withoutHandlersNothingIsObserved() {
		assertThat(RetryObservations.DISABLED.isEnabled()).isFalse();
		assertThat(new RetryObservations(ObservationRegistry.create(), null, null).isEnabled()).isFalse();
	}

	@Test
	void aForwardIsTaggedWithQueueTierOutcomeExceptionAndReasonAndTheAttempt() {
		RetryForwardContext context = RetryForwardContext.retried(RECEIVED, "orders", "retry.delay.10s", "10s",
				Duration.ofMillis(9613), "com.example.PaymentTimeoutException", 1);

		RetryObservations.stop(observations(null).startForward(context), null);

		assertThat(context.getName()).isEqualTo("rabbitmq.retry.forward");
		assertThat(context.getContextualName()).isEqualTo("orders retry");
		assertThat(context.getLowCardinalityKeyValues()).containsExactlyInAnyOrder(KeyValue.of("queue", "orders"),
				KeyValue.of("tier", "10s"), KeyValue.of("outcome", "retried"),
				KeyValue.of("exception", "PaymentTimeoutException"), KeyValue.of("reason", "none"));
		assertThat(context.getHighCardinalityKeyValues()).containsExactlyInAnyOrder(KeyValue.of("attempt", "1"),
				KeyValue.of("delay", "9613ms"), KeyValue.of("messaging.message.id", "order-1"));
		assertThat(this.recording.stopped).isTrue();
	}

	@Test
	void aParkIsTaggedWithItsReasonAndNoTier() {
		RetryForwardContext context = RetryForwardContext.parked(RECEIVED, "orders", "retry.parking-lot", "exhausted",
				"java.lang.IllegalStateException", 4);

		observations(null).startForward(context).stop();

		assertThat(context.getContextualName()).isEqualTo("orders park");
		assertThat(context.getLowCardinalityKeyValues()).contains(KeyValue.of("tier", "none"),
				KeyValue.of("outcome", "parked"), KeyValue.of("reason", "exhausted"));
		assertThat(context.getHighCardinalityKeyValues()).extracting(KeyValue::getKey).doesNotContain("delay");
	}

	@Test
	void withoutATracerTheForwardedPropertiesAreTheReceivedOnes() {
		RetryForwardContext context = RetryForwardContext.hop(RECEIVED, "orders", "retry.delay.1h", "1h", 2);

		observations(null).startForward(context);

		assertThat(context.publishedProperties()).isSameAs(RECEIVED);
	}

	@Test
	void theTraceContextATracerWritesReplacesTheCarriedOneAndStaleHeadersOfOtherFormatsAreDropped() {
		this.recording.writes = Map.of("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-01");
		RetryForwardContext context = RetryForwardContext.retried(RECEIVED, "orders", "retry.delay.10s", "10s",
				Duration.ofSeconds(10), "java.lang.IllegalStateException", 1);

		observations(null).startForward(context);

		assertThat(context.publishedProperties().getHeaders()).containsOnly(
				Map.entry("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-01"),
				Map.entry("tenant", "acme"));
		assertThat(context.publishedProperties().getMessageId()).isEqualTo("order-1");
		assertThat(RECEIVED.getHeaders()).as("the received properties are left as they were").containsKey("b3");
	}

	@Test
	void aReplayThatFailsStaysParkedWithItsReasonAndTheError() {
		RetryReplayContext context = new RetryReplayContext(RECEIVED, "orders", "java.lang.IllegalStateException", 2);
		Observation observation = observations(null).startReplay(context);

		context.stayed("origin-queue-missing");
		RetryObservations.stop(observation, new IllegalStateException("returned"));

		assertThat(context.getName()).isEqualTo("rabbitmq.retry.replay");
		assertThat(context.getContextualName()).isEqualTo("orders replay");
		assertThat(context.getLowCardinalityKeyValues()).containsExactlyInAnyOrder(KeyValue.of("queue", "orders"),
				KeyValue.of("outcome", "stayed"), KeyValue.of("exception", "IllegalStateException"),
				KeyValue.of("reason", "origin-queue-missing"));
		assertThat(context.getHighCardinalityKeyValues()).contains(KeyValue.of("replay", "2"));
		assertThat(context.getError()).hasMessage("returned");
	}

	@Test
	void aForwardThatFailsRecordsWhyOnItsObservation() {
		RetryForwardContext context = RetryForwardContext.hop(RECEIVED, "orders", "retry.delay.1h", "1h", 2);
		IllegalStateException nacked = new IllegalStateException("nacked by the broker");

		RetryObservations.stop(observations(null).startForward(context), new CompletionException(nacked));

		assertThat(context.getError()).isSameAs(nacked);
		assertThat(this.recording.stopped).isTrue();
	}

	@Test
	void aUserConventionReplacesTheDefaultOne() {
		RetryForwardObservationConvention custom = new DefaultRetryForwardObservationConvention() {

			@Override
			public KeyValues getLowCardinalityKeyValues(RetryForwardContext context) {
				return super.getLowCardinalityKeyValues(context).and("team", "payments");
			}

		};
		RetryForwardContext context = RetryForwardContext.hop(RECEIVED, "orders", "retry.delay.1h", "1h", 2);

		observations(custom).startForward(context);

		assertThat(context.getLowCardinalityKeyValues()).contains(KeyValue.of("team", "payments"),
				KeyValue.of("outcome", "hop"));
	}

	@Test
	void aListenerFailureIsRecordedOnTheDeliverysListenerObservationOnly() {
		RetryObservations observations = observations(null);
		ObservationRegistry registry = this.recording.registry;
		IllegalStateException failure = new IllegalStateException("payment failed");
		Observation listener = Observation.start("spring.rabbit.listener",
				() -> new RabbitMessageReceiverContext(new Message(new byte[0], new MessageProperties()), "listener"),
				registry);
		try (Observation.Scope scope = listener.openScope()) {
			observations.listenerFailed(failure);
		}
		Observation other = Observation.start("other", registry);
		try (Observation.Scope scope = other.openScope()) {
			observations.listenerFailed(failure);
		}

		assertThat(listener.getContext().getError()).isSameAs(failure);
		assertThat(other.getContext().getError()).isNull();
	}

	private RetryObservations observations(RetryForwardObservationConvention forwardConvention) {
		return new RetryObservations(this.recording.registry, forwardConvention, null);
	}

	/** A handler that writes headers on start, as a tracer's sender handler does. */
	private static final class Recording implements ObservationHandler<Observation.Context> {

		private final ObservationRegistry registry = ObservationRegistry.create();

		private Map<String, String> writes = Map.of();

		private boolean stopped;

		Recording() {
			this.registry.observationConfig().observationHandler(this);
		}

		@Override
		@SuppressWarnings("unchecked")
		public void onStart(Observation.Context context) {
			if (context instanceof RetrySenderContext sender) {
				Map<String, Object> carrier = sender.getCarrier();
				new LinkedHashMap<>(this.writes).forEach((key, value) -> sender.getSetter().set(carrier, key, value));
			}
		}

		@Override
		public void onStop(Observation.Context context) {
			this.stopped = true;
		}

		@Override
		public boolean supportsContext(Observation.Context context) {
			return true;
		}

	}

}
