package io.github.tieredretry.listener;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.RecordingApplication;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.connection.ChannelProxy;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A late ack must never settle another message. The container hands listeners a
 * cached-channel proxy, which silently opens a new channel once its own has died; an ack
 * sent through it after the delivering channel died (a connection loss while a forward
 * waited for its confirm) would ack whichever message has the same delivery tag on the
 * new channel. Here the listener kills its delivering channel and makes the proxy consume
 * a "victim" message with the same delivery tag; the victim must stay unacked.
 * <p>
 * An ack after a confirmed forward (on a follow-up thread) goes through the same code; it
 * cannot be staged this way with the simple container, which closes the proxy's new
 * channel (giving the victim back) as soon as the listener has returned on a dead
 * channel.
 */
@SpringBootTest(classes = { RecordingApplication.class, DeadChannelAckIntegrationTests.Listener.class })
@RabbitIntegrationTest
class DeadChannelAckIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("deadack")
		.settings((settings) -> settings.classicTiers("200ms").set("retry.defaults.delays", "200ms"));

	/** The message must be the first delivery of its consumer's channel. */
	static final String QUEUE = queues.name("work");

	@Autowired
	InvocationRecorder recorder;

	@Autowired
	Listener listener;

	@Test
	void anAckAfterTheListenerReturnedNeverSettlesAMessageOfAnotherChannel() throws Exception {
		String id = "a-" + queues.id();
		String victimQueue = queues.name("victim");
		try (BrokerClient broker = new BrokerClient()) {
			broker.declareQueue(victimQueue);
			broker.publish("", victimQueue, new AMQP.BasicProperties.Builder().messageId("victim").build(),
					"victim".getBytes(StandardCharsets.UTF_8));
			broker.publish("", QUEUE,
					new AMQP.BasicProperties.Builder().messageId(id)
						.headers(Map.of("victim-queue", victimQueue))
						.build(),
					"a".getBytes(StandardCharsets.UTF_8));

			await().atMost(Duration.ofSeconds(30)).until(() -> this.recorder.count(id) >= 2);
			Channel victimChannel = this.listener.victimChannels.get(id);
			assertThat(victimChannel).as("channel the proxy opened after the delivering one died").isNotNull();
			long victimTag = this.listener.victimTags.get(id);
			assertThat(victimTag).as("victim's delivery tag equals the late-acked message's").isEqualTo(1);

			// Had the late ack reached the victim's channel, closing it would not give
			// the victim back.
			if (victimChannel.isOpen()) {
				victimChannel.close();
			}
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(broker.count(victimQueue)).as("victim message still in its queue")
					.isEqualTo(1));
			assertThat(this.recorder.succeeded(id)).isTrue();
			broker.deleteQueue(victimQueue);
		}
	}

	static class Listener {

		private final InvocationRecorder recorder;

		final Map<String, Channel> victimChannels = new ConcurrentHashMap<>();

		final Map<String, Long> victimTags = new ConcurrentHashMap<>();

		Listener(InvocationRecorder recorder) {
			this.recorder = recorder;
		}

		@RabbitListener(queuesToDeclare = @Queue("${test.queues.work}"))
		@RetryableListener
		void onMessage(Message message, Channel channel) throws Exception {
			String id = message.getMessageProperties().getMessageId();
			long retryCount = message.getMessageProperties().getRetryCount();
			if (this.recorder.count(id) > 0) {
				this.recorder.record(id, retryCount, true);
				return;
			}
			assertThat(message.getMessageProperties().getDeliveryTag()).isEqualTo(1);
			// The delivering channel dies (as in a connection loss); the broker requeues
			// the message.
			((ChannelProxy) channel).getTargetChannel().close();
			// The next call through the proxy opens a new channel, on which the victim
			// gets delivery tag 1.
			BlockingQueue<Long> tags = new LinkedBlockingQueue<>();
			channel.basicConsume(message.getMessageProperties().getHeader("victim-queue"), false,
					new DefaultConsumer(channel) {

						@Override
						public void handleDelivery(String consumerTag, Envelope envelope,
								AMQP.BasicProperties properties, byte[] body) {
							tags.add(envelope.getDeliveryTag());
						}

					});
			Long tag = tags.poll(10, TimeUnit.SECONDS);
			assertThat(tag).as("victim delivered").isNotNull();
			this.victimTags.put(id, tag);
			this.victimChannels.put(id, ((ChannelProxy) channel).getTargetChannel());
			this.recorder.record(id, retryCount, true);
		}

	}

}
