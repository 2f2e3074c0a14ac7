package io.github.tieredretry.listener;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.delivery.RetryingMessageListener;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.RecordingApplication;
import io.github.tieredretry.testsupport.ScheduledRetries;
import io.github.tieredretry.testsupport.ScriptedListener;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The life of a message in a retryable listener, against a real broker: processed,
 * retried through tiers, or parked with its body and properties untouched.
 */
@SpringBootTest(classes = { RecordingApplication.class, RetryLifecycleIntegrationTests.ScriptedListeners.class })
@RabbitIntegrationTest
class RetryLifecycleIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("lifecycle")
		.settings((settings) -> settings.classicTiers("200ms, 500ms, 1013ms").retries(3, "200ms, 500ms"));

	static final String ID = queues.id();

	static final String QUEUE = queues.name("work");

	static final String CONVERSION_QUEUE = queues.name("typed");

	static final String PLAIN_QUEUE = queues.name("plain");

	@Autowired
	InvocationRecorder recorder;

	@Autowired
	RabbitListenerEndpointRegistry endpointRegistry;

	@Autowired
	ScheduledRetries scheduled;

	@Test
	void successfulMessageIsProcessedOnceAndNeverForwarded() {
		String id = publishText(QUEUE, "ok");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(id));
		// A forward of it would have gone before that of a marker that fails once now,
		// and come back before the marker's retry.
		String marker = publishText(QUEUE, "fail:1");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(marker));
		assertThat(this.scheduled.of(id)).isEmpty();
		assertThat(this.recorder.count(id)).isOne();
		assertThat(this.recorder.of(id).get(0).retryCount()).isZero();
		assertThat(parkedFrom(QUEUE)).isEmpty();
	}

	@Test
	void messageFailingTwiceIsRetriedWithGapsOfAtLeastTheConfiguredDelays() {
		String id = publishText(QUEUE, "fail:2");
		await().atMost(Duration.ofSeconds(15)).until(() -> this.recorder.succeeded(id));
		assertThat(this.recorder.retryCounts(id)).containsExactly(0L, 1L, 2L);
		List<Duration> gaps = this.recorder.gaps(id);
		assertThat(gaps.get(0)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
		assertThat(gaps.get(1)).isGreaterThanOrEqualTo(Duration.ofMillis(500));
		assertThat(parkedFrom(QUEUE)).isEmpty();
	}

	@Test
	void alwaysFailingMessageIsParkedAfterMaxRetriesWithBodyAndPropertiesUnchanged() {
		byte[] body = new byte[4096];
		new Random(42).nextBytes(body);
		body[0] = 'a';
		body[1] = ':';
		String id = "always-" + UUID.randomUUID();
		Map<String, Object> headers = new LinkedHashMap<>();
		headers.put("tenant", "acme");
		headers.put("attempt-budget", 7);
		headers.put("big-number", 12345678901L);
		headers.put("flag", true);
		headers.put("ratio", 0.25d);
		headers.put("raw", new byte[] { 1, 2, 3 });
		headers.put("nested", Map.of("k", "v"));
		headers.put("list", List.of("x", 1));
		// No content type and no priority: Spring AMQP would invent both when
		// republishing.
		AMQP.BasicProperties sent = new AMQP.BasicProperties.Builder().messageId(id)
			.correlationId("corr-1")
			.replyTo("reply-queue")
			.type("order.created")
			.appId("tests")
			.userId("guest")
			.timestamp(new Date(1_700_000_000_000L))
			.contentEncoding("identity")
			.expiration("60000")
			.deliveryMode(2)
			.headers(headers)
			.build();
		queues.broker().publish("", QUEUE, sent, body);

		await().atMost(Duration.ofSeconds(20))
			.until(() -> parkedFrom(QUEUE).stream()
				.anyMatch((message) -> id.equals(message.properties().getMessageId())));
		BrokerClient.Received parked = takeParked(id);

		assertThat(this.recorder.count(id)).isEqualTo(4);
		assertThat(parked.body()).isEqualTo(body);
		AMQP.BasicProperties received = parked.properties();
		assertThat(received.getContentType()).isNull();
		assertThat(received.getPriority()).isNull();
		assertThat(received.getContentEncoding()).isEqualTo("identity");
		assertThat(received.getCorrelationId()).isEqualTo("corr-1");
		assertThat(received.getReplyTo()).isEqualTo("reply-queue");
		assertThat(received.getType()).isEqualTo("order.created");
		assertThat(received.getAppId()).isEqualTo("tests");
		assertThat(received.getUserId()).isEqualTo("guest");
		assertThat(received.getTimestamp()).isEqualTo(new Date(1_700_000_000_000L));
		assertThat(received.getDeliveryMode()).isEqualTo(2);
		assertThat(received.getExpiration()).as("parked messages never expire").isNull();
		Map<String, Object> parkedHeaders = parked.headers();
		assertThat(String.valueOf(parkedHeaders.get("tenant"))).isEqualTo("acme");
		assertThat(parkedHeaders.get("attempt-budget")).isEqualTo(7);
		assertThat(parkedHeaders.get("big-number")).isEqualTo(12345678901L);
		assertThat(parkedHeaders.get("flag")).isEqualTo(true);
		assertThat(parkedHeaders.get("ratio")).isEqualTo(0.25d);
		assertThat((byte[]) parkedHeaders.get("raw")).containsExactly(1, 2, 3);
		assertThat(String.valueOf(((Map<?, ?>) parkedHeaders.get("nested")).get("k"))).isEqualTo("v");
		assertThat(parked.header(RetryHeaders.COUNT)).isEqualTo("3");
		assertThat(parked.header(RetryHeaders.QUEUE)).isEqualTo(QUEUE);
		parked.assertParked("exhausted", IllegalStateException.class);
		assertThat(parked.header(RetryHeaders.ERROR)).isEqualTo("scripted failure 4");
		assertThat(parked.header(RetryHeaders.ORIGINAL_EXPIRATION)).isEqualTo("60000");
		assertThat(parkedHeaders).containsKeys(RetryHeaders.FIRST_FAILURE, RetryHeaders.PARKED_AT)
			.doesNotContainKeys(RetryHeaders.DUE, RetryHeaders.TIER, RetryHeaders.STACK_TRACE);
	}

	@Test
	void unconvertiblePayloadIsParkedAtOnceAsNotRetryable() {
		String id = publishText(CONVERSION_QUEUE, "not-a-number");
		await().atMost(Duration.ofSeconds(10)).until(() -> !parkedFrom(CONVERSION_QUEUE).isEmpty());
		BrokerClient.Received parked = takeParked(id);
		assertThat(parked.header(RetryHeaders.PARKED_REASON)).isEqualTo("not-retryable");
		assertThat(parked.header(RetryHeaders.COUNT)).isEqualTo("0");
		assertThat(parked.header(RetryHeaders.EXCEPTION)).contains("MessageConversionException");
		assertThat(parked.bodyText()).isEqualTo("not-a-number");
	}

	@Test
	void noRetryOnExceptionIsParkedAtOnce() {
		String id = publishText(QUEUE, "reject");
		await().atMost(Duration.ofSeconds(10)).until(() -> !parkedFrom(QUEUE).isEmpty());
		BrokerClient.Received parked = takeParked(id);
		parked.assertParked("not-retryable", IllegalArgumentException.class);
		assertThat(this.recorder.count(id)).isEqualTo(1);
	}

	@Test
	void listenerWithoutTheAnnotationIsUntouched() {
		AbstractMessageListenerContainer plain = (AbstractMessageListenerContainer) this.endpointRegistry
			.getListenerContainer("plain-" + ID);
		AbstractMessageListenerContainer retryable = (AbstractMessageListenerContainer) this.endpointRegistry
			.getListenerContainer("retryable-" + ID);
		assertThat(plain.getMessageListener()).isNotInstanceOf(RetryingMessageListener.class);
		assertThat(retryable.getMessageListener()).isInstanceOf(RetryingMessageListener.class);
		String id = publishText(PLAIN_QUEUE, "reject");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.count(id) == 1);
		// Spring AMQP's own behaviour: rejected without requeue, and not our business. A
		// copy given back to the queue would come before a marker published now, which
		// the queue's one consumer gets in order.
		String marker = publishText(PLAIN_QUEUE, "reject");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.count(marker) == 1);
		assertThat(this.recorder.count(id)).isOne();
		assertThat(parkedFrom(PLAIN_QUEUE)).isEmpty();
		assertThat(queues.broker().count(PLAIN_QUEUE)).isZero();
	}

	private String publishText(String queue, String text) {
		String id = text + "-" + UUID.randomUUID();
		AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().messageId(id)
			.contentType("text/plain")
			.deliveryMode(2)
			.build();
		queues.broker().publish("", queue, properties, text.getBytes(StandardCharsets.UTF_8));
		return id;
	}

	private static List<BrokerClient.Received> parkedFrom(String queue) {
		return queues.parkingLot().from(queue);
	}

	private static BrokerClient.Received takeParked(String id) {
		BrokerClient.Received message = queues.parkingLot().find(id);
		assertThat(message).as("parked message " + id).isNotNull();
		return message;
	}

	static class ScriptedListeners extends ScriptedListener {

		ScriptedListeners(InvocationRecorder recorder) {
			super(recorder);
		}

		@RabbitListener(id = "retryable-${test.id}", queuesToDeclare = @Queue("${test.queues.work}"))
		@RetryableListener(noRetryOn = IllegalArgumentException.class)
		void onMessage(Message message) {
			String id = message.getMessageProperties().getMessageId();
			long retryCount = message.getMessageProperties().getRetryCount();
			String script = new String(message.getBody(), StandardCharsets.ISO_8859_1);
			int attempt = this.recorder.count(id) + 1;
			boolean fail = script.startsWith("a:") || script.equals("reject")
					|| (script.startsWith("fail:") && attempt <= Integer.parseInt(script.substring(5)));
			this.recorder.record(id, retryCount, !fail);
			if (script.equals("reject")) {
				throw new IllegalArgumentException("not retryable");
			}
			if (fail) {
				throw new IllegalStateException("scripted failure " + attempt);
			}
		}

		@RabbitListener(queuesToDeclare = @Queue("${test.queues.typed}"))
		@RetryableListener
		void onNumber(Integer number) {
			throw new AssertionError("must not be invoked with " + number);
		}

		@RabbitListener(id = "plain-${test.id}", queuesToDeclare = @Queue("${test.queues.plain}"))
		void onPlain(Message message) {
			this.recorder.record(message.getMessageProperties().getMessageId(), 0, false);
			throw new AmqpRejectAndDontRequeueException("plain listener rejects");
		}

	}

}
