package io.github.tieredretry.observation;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.parkinglot.ParkedMessageFilter;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.parkinglot.ReplayResult;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.ScriptedListener;
import io.github.tieredretry.testsupport.TestQueues;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanId;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.amqp.autoconfigure.SimpleRabbitListenerContainerFactoryConfigurer;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One trace from a message's first attempt to its last, against a real broker, with
 * Spring Boot's OpenTelemetry tracing (spans kept in memory) and Spring AMQP's listener
 * and template observations enabled.
 */
@SpringBootTest
@RabbitIntegrationTest
class TracingAcrossRetriesIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("tracing");

	static final String QUEUE = queues.name("work");

	static final String UNOBSERVED_QUEUE = queues.name("unobserved");

	static final String BATCH_QUEUE = queues.name("batch");

	static final String PARKING_LOT = queues.parkingLotName();

	static final String FIRST_TIER = queues.owned("retry.delay.173ms");

	static final String SECOND_TIER = queues.owned("retry.delay.331ms");

	static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("outcome");

	static final AttributeKey<String> TIER = AttributeKey.stringKey("tier");

	static final AttributeKey<String> EXCEPTION = AttributeKey.stringKey("exception");

	static final AttributeKey<String> ATTEMPT = AttributeKey.stringKey("attempt");

	static final AttributeKey<String> DELAY = AttributeKey.stringKey("delay");

	static final AttributeKey<String> MESSAGE_ID = AttributeKey.stringKey("messaging.message.id");

	static {
		queues.settings((settings) -> settings.set("test.queue", QUEUE)
			.set("test.unobserved-queue", UNOBSERVED_QUEUE)
			.set("test.batch-queue", BATCH_QUEUE)
			.classicTiers("173ms, 331ms")
			.retries(2, "173ms, 331ms")
			.set("spring.rabbitmq.listener.simple.observation-enabled", "true")
			.set("spring.rabbitmq.template.observation-enabled", "true")
			.set("management.tracing.sampling.probability", "1.0"));
	}

	@Autowired
	RabbitTemplate rabbitTemplate;

	/**
	 * Not a bean: Spring Boot would also hand every span to it in batches, and each would
	 * be there twice.
	 */
	static final InMemorySpanExporter spans = InMemorySpanExporter.create();

	@Autowired
	InvocationRecorder recorder;

	@Autowired
	ParkingLotService parkingLot;

	@Autowired
	MeterRegistry meters;

	@Autowired
	RabbitListenerEndpointRegistry endpoints;

	@Test
	void messageFailingTwiceThenSucceedingIsOneTraceWithThreeProcessingSpansAndTwoForwardSpansInOrder() {
		String id = send(QUEUE, "fail:2");
		await().atMost(Duration.ofSeconds(15)).until(() -> this.recorder.succeeded(id));

		List<SpanData> trace = awaitTrace(id, (spans) -> processing(spans).size() == 3 && forwards(spans).size() == 2);
		List<SpanData> processing = processing(trace);
		List<SpanData> forwards = forwards(trace);
		SpanData sent = trace.stream()
			.filter((span) -> span.getKind() == SpanKind.PRODUCER && !forwards.contains(span))
			.findFirst()
			.orElseThrow();
		assertThat(processing.get(0).getParentSpanId()).as("attempt 1 continues the producer's trace")
			.isEqualTo(sent.getSpanId());
		assertThat(forwards.get(0).getParentSpanId()).isEqualTo(processing.get(0).getSpanId());
		assertThat(processing.get(1).getParentSpanId()).isEqualTo(forwards.get(0).getSpanId());
		assertThat(forwards.get(1).getParentSpanId()).isEqualTo(processing.get(1).getSpanId());
		assertThat(processing.get(2).getParentSpanId()).isEqualTo(forwards.get(1).getSpanId());
		assertThat(processing).extracting((span) -> span.getStatus().getStatusCode())
			.as("attempts 1 and 2 failed, attempt 3 succeeded")
			.containsExactly(StatusCode.ERROR, StatusCode.ERROR, StatusCode.UNSET);
		assertThat(forwards).extracting(SpanData::getName).containsOnly(QUEUE + " retry");
		assertThat(forwards).extracting((span) -> span.getAttributes().get(TIER)).containsExactly("173ms", "331ms");
		assertThat(forwards).extracting((span) -> span.getAttributes().get(ATTEMPT)).containsExactly("1", "2");
		assertThat(forwards).extracting((span) -> span.getAttributes().get(DELAY)).containsExactly("173ms", "331ms");
		assertThat(forwards).extracting((span) -> span.getAttributes().get(OUTCOME)).containsOnly("retried");
		assertThat(forwards).extracting((span) -> span.getAttributes().get(EXCEPTION))
			.containsOnly("IllegalStateException");
		assertThat(this.meters.get("rabbitmq.retry.forward")
			.tag("queue", QUEUE)
			.tag("tier", "331ms")
			.tag("outcome", "retried")
			.tag("error", "none")
			.timer()
			.count()).as("Spring Boot's metrics handler times the same observations").isPositive();
	}

	@Test
	void parkedThenReplayedMessageStartsANewTraceLinkedToTheSpanThatParkedIt() {
		String id = send(QUEUE, "fail:3");
		List<SpanData> parkedTrace = awaitTrace(id, (spans) -> forwards(spans).stream()
			.anyMatch((span) -> "parked".equals(span.getAttributes().get(OUTCOME))));
		SpanData park = forwards(parkedTrace).stream()
			.filter((span) -> "parked".equals(span.getAttributes().get(OUTCOME)))
			.findFirst()
			.orElseThrow();
		assertThat(park.getName()).isEqualTo(QUEUE + " park");
		assertThat(park.getAttributes().get(AttributeKey.stringKey("reason"))).isEqualTo("exhausted");

		ReplayResult replayed = this.parkingLot
			.replayMatching(new ParkedMessageFilter(null, null, null, null, null, null, id), null);
		assertThat(replayed.moved()).isEqualTo(1);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(id));

		SpanData replay = await().atMost(Duration.ofSeconds(10))
			.until(() -> spans.getFinishedSpanItems()
				.stream()
				.filter((span) -> span.getName().equals(QUEUE + " replay")
						&& id.equals(span.getAttributes().get(MESSAGE_ID)))
				.findFirst()
				.orElse(null), (span) -> span != null);
		assertThat(replay.getTraceId()).as("a new trace, not the days-old parked one").isNotEqualTo(park.getTraceId());
		assertThat(replay.getParentSpanId()).isEqualTo(SpanId.getInvalid());
		assertThat(replay.getLinks()).extracting(LinkData::getSpanContext).singleElement().satisfies((linked) -> {
			assertThat(linked.getTraceId()).isEqualTo(park.getTraceId());
			assertThat(linked.getSpanId()).isEqualTo(park.getSpanId());
		});
		assertThat(replay.getAttributes().get(OUTCOME)).isEqualTo("replayed");
		SpanData processedAfterReplay = await().atMost(Duration.ofSeconds(10))
			.until(() -> processing(spansOf(replay.getTraceId())), (spans) -> spans.size() == 1)
			.get(0);
		assertThat(processedAfterReplay.getParentSpanId()).isEqualTo(replay.getSpanId());
		assertThat(processedAfterReplay.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
	}

	@Test
	void withoutTheListenerObservationAForwardContinuesTheTraceTheMessageArrivedWithAndDropsStaleB3Headers() {
		String traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
		String producerSpanId = "00f067aa0ba902b7";
		String id = "unobserved-" + UUID.randomUUID();
		AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().messageId(id)
			.headers(java.util.Map.of("traceparent", "00-" + traceId + "-" + producerSpanId + "-01", "b3",
					"80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1"))
			.build();
		queues.broker().publish("", UNOBSERVED_QUEUE, properties, "fail:1".getBytes(StandardCharsets.UTF_8));
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(id));

		SpanData forward = awaitTrace(id, (spans) -> forwards(spans).size() == 1).get(0);
		assertThat(forward.getTraceId()).isEqualTo(traceId);
		assertThat(forward.getParentSpanId()).isEqualTo(producerSpanId);
		InvocationRecorder.Invocation retried = this.recorder.of(id).get(1);
		assertThat(String.valueOf(retried.header("traceparent")))
			.isEqualTo("00-" + traceId + "-" + forward.getSpanId() + "-01");
		assertThat(retried.header("b3")).as("a stale header of another format would be read first").isNull();
		assertThat(spansOf(traceId)).as("no processing spans: the container does not observe")
			.noneMatch((span) -> span.getKind() == SpanKind.CONSUMER);
	}

	@Test
	void eachFailedMessageOfABatchIsForwardedInTheTraceItArrivedWith() {
		String firstTrace = "5bf92f3577b34da6a3ce929d0e0e4731";
		String secondTrace = "6bf92f3577b34da6a3ce929d0e0e4732";
		String first = publishTraced(BATCH_QUEUE, firstTrace, "10f067aa0ba902b1");
		String second = publishTraced(BATCH_QUEUE, secondTrace, "20f067aa0ba902b2");
		// Both wait in the queue, so that the consumer takes them as one batch.
		this.endpoints.getListenerContainer("traced-batch").start();
		await().atMost(Duration.ofSeconds(10))
			.until(() -> this.recorder.succeeded(first) && this.recorder.succeeded(second));

		SpanData firstForward = awaitTrace(first, (spans) -> forwards(spans).size() == 1).get(0);
		SpanData secondForward = awaitTrace(second, (spans) -> forwards(spans).size() == 1).get(0);
		assertThat(firstForward.getTraceId()).isEqualTo(firstTrace);
		assertThat(firstForward.getParentSpanId()).isEqualTo("10f067aa0ba902b1");
		assertThat(secondForward.getTraceId()).isEqualTo(secondTrace);
		assertThat(secondForward.getParentSpanId()).isEqualTo("20f067aa0ba902b2");
		assertThat(String.valueOf(this.recorder.of(second).get(1).header("traceparent")))
			.isEqualTo("00-" + secondTrace + "-" + secondForward.getSpanId() + "-01");
	}

	private String publishTraced(String queue, String traceId, String producerSpanId) {
		String id = "batch-" + UUID.randomUUID();
		AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().messageId(id)
			.headers(java.util.Map.of("traceparent", "00-" + traceId + "-" + producerSpanId + "-01"))
			.build();
		queues.broker().publish("", queue, properties, "fail:1".getBytes(StandardCharsets.UTF_8));
		return id;
	}

	private String send(String queue, String script) {
		String id = script + "-" + UUID.randomUUID();
		this.rabbitTemplate.convertAndSend("", queue, script, (message) -> {
			message.getMessageProperties().setMessageId(id);
			return message;
		});
		return id;
	}

	/**
	 * The spans of the trace a message's forward spans belong to, once they pass the
	 * check.
	 */
	private List<SpanData> awaitTrace(String messageId, java.util.function.Predicate<List<SpanData>> complete) {
		return await().atMost(Duration.ofSeconds(15)).until(() -> {
			String traceId = spans.getFinishedSpanItems()
				.stream()
				.filter((span) -> messageId.equals(span.getAttributes().get(MESSAGE_ID)))
				.map(SpanData::getTraceId)
				.findFirst()
				.orElse(null);
			return (traceId != null) ? spansOf(traceId) : List.<SpanData>of();
		}, complete);
	}

	private List<SpanData> spansOf(String traceId) {
		return spans.getFinishedSpanItems()
			.stream()
			.filter((span) -> span.getTraceId().equals(traceId))
			.sorted(Comparator.comparingLong(SpanData::getStartEpochNanos))
			.toList();
	}

	private static List<SpanData> processing(List<SpanData> spans) {
		return spans.stream().filter((span) -> span.getKind() == SpanKind.CONSUMER).toList();
	}

	private static List<SpanData> forwards(List<SpanData> spans) {
		return spans.stream()
			.filter((span) -> span.getAttributes().get(OUTCOME) != null && span.getKind() == SpanKind.PRODUCER
					&& !span.getName().endsWith(" replay"))
			.toList();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@Bean
		SpanProcessor inMemorySpanProcessor() {
			// Exported as each span ends, not in batches: the test sees a span as soon as
			// it has ended.
			return SimpleSpanProcessor.create(spans);
		}

		@Bean
		InvocationRecorder invocationRecorder() {
			return new InvocationRecorder();
		}

		@Bean
		Declarables queues() {
			return new Declarables(new Queue(QUEUE), new Queue(UNOBSERVED_QUEUE), new Queue(BATCH_QUEUE));
		}

		@Bean
		SimpleRabbitListenerContainerFactory unobservedContainerFactory(
				SimpleRabbitListenerContainerFactoryConfigurer configurer, ConnectionFactory connectionFactory) {
			SimpleRabbitListenerContainerFactory factory = configured(configurer, connectionFactory);
			factory.setObservationEnabled(false);
			return factory;
		}

		@Bean
		SimpleRabbitListenerContainerFactory batchContainerFactory(
				SimpleRabbitListenerContainerFactoryConfigurer configurer, ConnectionFactory connectionFactory) {
			SimpleRabbitListenerContainerFactory factory = configured(configurer, connectionFactory);
			factory.setConsumerBatchEnabled(true);
			factory.setBatchSize(2);
			factory.setAutoStartup(false);
			return factory;
		}

		/**
		 * A container factory as Spring Boot configures its own, to change from there.
		 */
		private static SimpleRabbitListenerContainerFactory configured(
				SimpleRabbitListenerContainerFactoryConfigurer configurer, ConnectionFactory connectionFactory) {
			SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
			configurer.configure(factory, connectionFactory);
			return factory;
		}

		@Bean
		TracedListeners tracedListeners(InvocationRecorder recorder) {
			return new TracedListeners(recorder);
		}

	}

	static class TracedListeners extends ScriptedListener {

		TracedListeners(InvocationRecorder recorder) {
			super(recorder);
		}

		@RabbitListener(queues = "${test.queue}")
		@RetryableListener
		void onMessage(Message message) {
			run(message);
		}

		@RabbitListener(id = "traced-batch", queues = "${test.batch-queue}", containerFactory = "batchContainerFactory")
		@RetryableListener
		void onBatch(List<Message> messages) {
			// A failure of the whole batch on the first attempt: each message is retried.
			boolean fails = this.recorder.count(messages.get(0).getMessageProperties().getMessageId()) == 0;
			messages.forEach((message) -> this.recorder.record(message, !fails));
			if (fails) {
				throw new IllegalStateException("first attempt of the batch fails");
			}
		}

		@RabbitListener(queues = "${test.unobserved-queue}", containerFactory = "unobservedContainerFactory")
		@RetryableListener
		void onUnobservedMessage(Message message) {
			boolean fails = this.recorder.count(message.getMessageProperties().getMessageId()) == 0;
			this.recorder.record(message, !fails);
			if (fails) {
				throw new IllegalStateException("first attempt fails");
			}
		}

	}

}
