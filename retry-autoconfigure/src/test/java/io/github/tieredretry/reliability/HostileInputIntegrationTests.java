package io.github.tieredretry.reliability;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.impl.AMQContentHeader;
import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.ParkingLot;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.Script;
import io.github.tieredretry.testsupport.ScriptedListener;
import io.github.tieredretry.testsupport.TestQueues;
import io.github.tieredretry.testsupport.WorkQueueApplication;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Payloads the converter rejects and {@code retry-*} headers that come from outside with
 * wrong types or values: none may crash the consumer, loop, hold a message beyond its
 * policy, or grow the headers towards the broker's {@code frame_max}.
 */
@SpringBootTest
@RabbitIntegrationTest
class HostileInputIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("hostile");

	static final TestQueues.Topology topology = queues.topology();

	static final String SCRIPTED = queues.name("scripted");

	static final String SERIALIZED = queues.name("serialized");

	static final String TEXT = queues.name("text");

	static final String HUGE_ERRORS = queues.name("huge-errors");

	static final int MAX_RETRIES = 2;

	static {
		queues.settings((settings) -> settings.topology(topology)
			.retries(MAX_RETRIES, topology.shortTier())
			.set("test.work", SCRIPTED)
			.set("test.serialized", SERIALIZED)
			.set("test.text", TEXT)
			.set("test.huge-errors", HUGE_ERRORS)
			.set("retry.headers.include-stack-trace", "true"));
	}

	@Autowired
	InvocationRecorder deliveries;

	@Test
	void bodyThatIsNotASerializedObjectIsParkedAtOnceAsNotRetryable() {
		byte[] garbage = "definitely not java serialization".getBytes(StandardCharsets.UTF_8);
		String id = publish(SERIALIZED, properties().contentType("application/x-java-serialized-object"), garbage);

		await().atMost(Duration.ofSeconds(10)).until(() -> parked().contains(id));
		BrokerClient.Received parkedMessage = parked().single(id);
		assertThat(parkedMessage.header(RetryHeaders.PARKED_REASON)).isEqualTo("not-retryable");
		assertThat(parkedMessage.header(RetryHeaders.EXCEPTION)).endsWith("MessageConversionException");
		assertThat(parkedMessage.header(RetryHeaders.COUNT)).isEqualTo("0");
		assertThat(parkedMessage.body()).isEqualTo(garbage);
		assertThat(parkedMessage.properties().getContentType()).isEqualTo("application/x-java-serialized-object");
	}

	@Test
	void textInACharsetTheJvmDoesNotKnowIsParkedAtOnceAsNotRetryable() {
		byte[] body = "caf\u00e9".getBytes(StandardCharsets.UTF_8);
		String id = publish(TEXT, properties().contentType("text/plain").contentEncoding("x-no-such-charset"), body);

		await().atMost(Duration.ofSeconds(10)).until(() -> parked().contains(id));
		BrokerClient.Received parkedMessage = parked().single(id);
		assertThat(parkedMessage.header(RetryHeaders.PARKED_REASON)).isEqualTo("not-retryable");
		assertThat(parkedMessage.header(RetryHeaders.EXCEPTION)).endsWith("MessageConversionException");
		assertThat(parkedMessage.body()).isEqualTo(body);
		assertThat(parkedMessage.properties().getContentEncoding()).isEqualTo("x-no-such-charset");
	}

	static Stream<Arguments> unusableRetryCounts() {
		return Stream.of(Arguments.of("abc"), Arguments.of(-5), Arguments.of(-5L), Arguments.of("-5"),
				Arguments.of(2.5d), Arguments.of("99999999999999999999999"), Arguments.of(""));
	}

	@ParameterizedTest(name = "retry-count {0}")
	@MethodSource("unusableRetryCounts")
	void retryCountThatIsNotAUsableNumberCountsAsNoRetryYet(Object retryCount) {
		String id = publish(SCRIPTED, textMessage(ownRetryHeaders("always", retryCount)));

		await().atMost(Duration.ofSeconds(15)).until(() -> parked().contains(id));
		assertThat(this.deliveries.of(id)).extracting(InvocationRecorder.Invocation::retryCount)
			.containsExactly(0L, 1L, 2L);
		BrokerClient.Received parkedMessage = parked().single(id);
		assertThat(parkedMessage.header(RetryHeaders.PARKED_REASON)).isEqualTo("exhausted");
		assertThat(parkedMessage.header(RetryHeaders.COUNT)).isEqualTo(String.valueOf(MAX_RETRIES));
	}

	@Test
	void hugeRetryCountParksAFailingMessageAtItsFirstFailureWithoutOverflowing() {
		String id = publish(SCRIPTED, textMessage(ownRetryHeaders("always", Long.MAX_VALUE)));

		await().atMost(Duration.ofSeconds(10)).until(() -> parked().contains(id));
		assertThat(this.deliveries.count(id)).isOne();
		BrokerClient.Received parkedMessage = parked().single(id);
		assertThat(parkedMessage.header(RetryHeaders.PARKED_REASON)).isEqualTo("exhausted");
		assertThat(parkedMessage.header(RetryHeaders.COUNT)).isEqualTo(String.valueOf(Long.MAX_VALUE));
	}

	@Test
	void hugeRetryCountDoesNotStopASucceedingMessage() {
		String id = publish(SCRIPTED, textMessage(ownRetryHeaders("ok", Long.MAX_VALUE)));

		await().atMost(Duration.ofSeconds(10)).until(() -> this.deliveries.successes(id) == 1);
		// A later message that fails through the same tier (the policy's only delay) into
		// the parking lot: once it is parked, a retry or a parking of the earlier one
		// would have come first.
		String later = publish(SCRIPTED, scripted("always"));
		await().atMost(Duration.ofSeconds(15)).until(() -> parked().contains(later));
		assertThat(this.deliveries.count(id)).isOne();
		assertThat(parked().contains(id)).isFalse();
	}

	@Test
	void retryDueYearsAheadDoesNotHoldTheMessageBack() {
		Map<String, Object> headers = ownRetryHeaders("ok", 1);
		headers.put(RetryHeaders.DUE, Instant.now().plus(3650, ChronoUnit.DAYS).toEpochMilli());
		Instant published = Instant.now();
		String id = publish(SCRIPTED, textMessage(headers));

		// Held back, it would wait at least one long tier (the largest) before the
		// listener saw it.
		await().atMost(topology.longTier().minusMillis(500)).until(() -> this.deliveries.successes(id) == 1);
		assertThat(Duration.between(published, this.deliveries.firstSuccess(id))).isLessThan(topology.longTier());
		assertThat(this.deliveries.of(id)).singleElement()
			.extracting(InvocationRecorder.Invocation::retryCount)
			.isEqualTo(1L);
	}

	@Test
	void retryDueYearsAheadGivesWayToThePolicysDelayWhenTheRetryFailsAgain() {
		Map<String, Object> headers = ownRetryHeaders("always", 1);
		headers.put(RetryHeaders.DUE, Instant.now().plus(3650, ChronoUnit.DAYS).toEpochMilli());
		String id = publish(SCRIPTED, textMessage(headers));

		await().atMost(Duration.ofSeconds(10)).until(() -> parked().contains(id));
		assertThat(this.deliveries.of(id)).extracting(InvocationRecorder.Invocation::retryCount)
			.containsExactly(1L, 2L);
		assertThat(this.deliveries.gaps(id)).singleElement()
			.satisfies((gap) -> assertThat(gap).isGreaterThanOrEqualTo(topology.shortTier())
				.isLessThan(topology.longTier()));
		assertThat(parked().single(id).headers()).doesNotContainKey(RetryHeaders.DUE);
	}

	static Stream<Arguments> malformedTimestamps() {
		long future = Instant.now().plus(365, ChronoUnit.DAYS).toEpochMilli();
		return Stream.of(Arguments.of(RetryHeaders.DUE, "tomorrow"), Arguments.of(RetryHeaders.DUE, -1L),
				Arguments.of(RetryHeaders.DUE, Long.MAX_VALUE), Arguments.of(RetryHeaders.DUE, new byte[] { 1, 2 }),
				Arguments.of(RetryHeaders.FIRST_FAILURE, future),
				Arguments.of(RetryHeaders.FIRST_FAILURE, "yesterday"));
	}

	@ParameterizedTest(name = "{0} = {1}")
	@MethodSource("malformedTimestamps")
	void malformedRetryTimestampsNeitherDelayNorBreakTheListener(String header, Object value) {
		Map<String, Object> headers = ownRetryHeaders("ok", 1);
		headers.put(header, value);
		String id = publish(SCRIPTED, textMessage(headers));

		await().atMost(topology.longTier().minusMillis(500)).until(() -> this.deliveries.successes(id) == 1);
		assertThat(this.deliveries.count(id)).isOne();
	}

	@Test
	void oneMegabyteExceptionMessageAndItsStackTraceKeepTheHeadersFarBelowFrameMax() throws IOException {
		String id = publish(HUGE_ERRORS, scripted("always"));

		await().atMost(Duration.ofSeconds(15)).until(() -> parked().contains(id));
		BrokerClient.Received parkedMessage = parked().single(id);
		assertThat(this.deliveries.count(id)).isEqualTo(1 + MAX_RETRIES);
		String error = parkedMessage.header(RetryHeaders.ERROR);
		String stackTrace = parkedMessage.header(RetryHeaders.STACK_TRACE);
		assertThat(error).hasSizeLessThanOrEqualTo(1000).startsWith("\u20ac\u20ac").endsWith("...[truncated]");
		assertThat(stackTrace).hasSizeLessThanOrEqualTo(8000)
			.startsWith(HugeFailure.class.getName())
			.endsWith("...[truncated]");
		int frameMax = queues.broker().channel().getConnection().getFrameMax();
		int headerFrameSize = encodedHeaderFrameSize(parkedMessage);
		assertThat(frameMax).isPositive();
		// Every header, ours and the producer's, in one content-header frame: well under
		// frame_max (the limits count characters; a 3-byte UTF-8 character is the worst
		// case, about 27 KB in all).
		assertThat(headerFrameSize).as("encoded content header of the parked message (frame_max %d)", frameMax)
			.isLessThan(frameMax / 4)
			.isLessThan(32 * 1024);
	}

	@Test
	void stackTraceHeaderShowsWhereTheFailureHappenedEvenWhenItsMessageIsHuge() {
		String id = publish(HUGE_ERRORS, scripted("always"));

		await().atMost(Duration.ofSeconds(15)).until(() -> parked().contains(id));
		String stackTrace = parked().single(id).header(RetryHeaders.STACK_TRACE);
		// A stack trace header made of nothing but the 1 MB message would say nothing
		// about the failure.
		assertThat(stackTrace).hasSizeLessThanOrEqualTo(8000)
			.contains("\tat " + Listeners.class.getName() + ".deepFailure(");
	}

	private static int encodedHeaderFrameSize(BrokerClient.Received message) throws IOException {
		return ((AMQContentHeader) message.properties()).toFrame(1, message.body().length).size();
	}

	private String publish(String queue, AMQP.BasicProperties.Builder properties) {
		return publish(queue, properties, "payload".getBytes(StandardCharsets.UTF_8));
	}

	private String publish(String queue, AMQP.BasicProperties.Builder properties, byte[] body) {
		String id = UUID.randomUUID().toString();
		queues.broker().publish("", queue, properties.messageId(id).build(), body);
		return id;
	}

	private static AMQP.BasicProperties.Builder properties() {
		return new AMQP.BasicProperties.Builder().deliveryMode(2);
	}

	private static AMQP.BasicProperties.Builder scripted(String script) {
		return textMessage(Map.of(Script.HEADER, script));
	}

	private static AMQP.BasicProperties.Builder textMessage(Map<String, Object> headers) {
		return properties().contentType("text/plain").headers(headers);
	}

	/**
	 * Retry headers as if this starter had written them for the scripted queue, with a
	 * given count.
	 */
	private static Map<String, Object> ownRetryHeaders(String script, Object retryCount) {
		Map<String, Object> headers = new LinkedHashMap<>();
		headers.put(Script.HEADER, script);
		headers.put(RetryHeaders.QUEUE, SCRIPTED);
		headers.put(RetryHeaders.COUNT, retryCount);
		headers.put(RetryHeaders.FIRST_FAILURE, Instant.now().minusSeconds(1).toEpochMilli());
		return headers;
	}

	/**
	 * Thrown by the huge-errors listener: a 1 MB message, a 1 MB cause, and a deep stack.
	 */
	static class HugeFailure extends RuntimeException {

		HugeFailure(String message, Throwable cause) {
			super(message, cause);
		}

	}

	/**
	 * The {@link WorkQueueApplication} on the scripted queue, with listeners that the
	 * converter fails and one that fails hugely.
	 */
	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App extends WorkQueueApplication {

		@Bean
		Declarables queues() {
			return new Declarables(new Queue(SERIALIZED), new Queue(TEXT), new Queue(HUGE_ERRORS));
		}

		@Bean
		Listeners listeners(InvocationRecorder deliveries) {
			return new Listeners(deliveries);
		}

	}

	static class Listeners extends ScriptedListener {

		Listeners(InvocationRecorder deliveries) {
			super(deliveries);
		}

		@RabbitListener(queues = "${test.serialized}")
		@RetryableListener
		void onSerialized(java.util.Date date) {
			throw new AssertionError("must not be invoked with " + date);
		}

		@RabbitListener(queues = "${test.text}")
		@RetryableListener
		void onText(String text) {
			throw new AssertionError("must not be invoked with " + text);
		}

		@RabbitListener(queues = "${test.huge-errors}")
		@RetryableListener
		void onHugeErrors(Message message) {
			this.recorder.record(message, false);
			throw deepFailure(200);
		}

		private static HugeFailure deepFailure(int depth) {
			if (depth > 0) {
				return deepFailure(depth - 1);
			}
			// 1 MB each, in a character that takes 3 bytes in UTF-8.
			String megabyte = "\u20ac".repeat(1024 * 1024 / 3);
			return new HugeFailure(megabyte, new UncheckedIOException(new IOException("cause: " + megabyte)));
		}

	}

	/** The test's reader of the parking lot. */
	private static ParkingLot parked() {
		return queues.parkingLot(topology.parkingLot());
	}

}
