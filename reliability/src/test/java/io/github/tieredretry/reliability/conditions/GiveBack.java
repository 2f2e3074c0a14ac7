package io.github.tieredretry.reliability.conditions;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Messages given back to their queue with {@code basic.reject}, all at once, as the tests
 * of RabbitMQ 4.3's delayed retry start: from then on each waits for the queue's delay.
 */
final class GiveBack {

	private GiveBack() {
	}

	/**
	 * Publish messages to the queue, take them all, and give them back.
	 * @param channel a channel, put in confirm mode
	 * @param queue the queue, declared, empty
	 * @param messages how many
	 * @param delayedRetry whether the broker delays them: then this returns only once the
	 * queue applied the rejects
	 * @return when they were given back, in epoch milliseconds
	 */
	static long rejectAll(Channel channel, String queue, int messages, boolean delayedRetry) throws Exception {
		channel.confirmSelect();
		for (int i = 0; i < messages; i++) {
			channel.basicPublish("", queue, null, ("m" + i).getBytes(StandardCharsets.UTF_8));
		}
		channel.waitForConfirmsOrDie(10_000);
		List<GetResponse> taken = new ArrayList<>();
		for (int i = 0; i < messages; i++) {
			taken.add(channel.basicGet(queue, false));
		}
		long returned = System.currentTimeMillis();
		for (GetResponse message : taken) {
			channel.basicReject(message.getEnvelope().getDeliveryTag(), true);
		}
		if (delayedRetry) {
			// Confirmed once the queue applied the rejects sent before it; the only ready
			// message.
			channel.basicPublish("", queue, null, "marker".getBytes(StandardCharsets.UTF_8));
			channel.waitForConfirmsOrDie(10_000);
			assertThat(channel.basicGet(queue, true).getBody()).asString(StandardCharsets.UTF_8).isEqualTo("marker");
		}
		return returned;
	}

}
