package io.github.tieredretry.internal.delayedsend;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.delayedsend.DelayedSendException;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.headers.RetryHeaderValues;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.policy.ParkedReason;
import org.jspecify.annotations.Nullable;

/**
 * The AMQP properties of a delayed send on its way: what it carries through the tiers
 * (where it goes once due, when that is, which hop it is on) and how it is given back as
 * sent.
 * <p>
 * In the tiers a message must be persistent, without {@code expiration} (its own TTL
 * would expire it before the tier's) and without {@code CC}/{@code BCC} (the broker would
 * route on them at every hop, to work queues bound to {@code retry.return}): each is kept
 * in a header and restored when the message reaches its target.
 */
final class ScheduledProperties {

	/** AMQP delivery mode 2. */
	private static final int PERSISTENT = 2;

	private static final String CC = "CC";

	private static final String BCC = "BCC";

	/**
	 * What dead-lettering out of a tier adds to a message: a direct publish has none of
	 * it.
	 */
	private static final List<String> DEAD_LETTERING = List.of("x-death", "x-first-death-exchange",
			"x-first-death-queue", "x-first-death-reason", "x-last-death-exchange", "x-last-death-queue",
			"x-last-death-reason");

	/**
	 * The starter's headers of a delayed send, of a parked one and of its replay: none
	 * reaches the target.
	 */
	private static final Set<String> STARTER_HEADERS = Set.of(RetryHeaders.SEND_EXCHANGE, RetryHeaders.SEND_ROUTING_KEY,
			RetryHeaders.SEND_BCC, RetryHeaders.SEND_DELIVERY_MODE, RetryHeaders.SEND_HOP, RetryHeaders.DUE,
			RetryHeaders.TIER, RetryHeaders.PARKING_LOT, RetryHeaders.ORIGINAL_EXPIRATION, RetryHeaders.ORIGINAL_CC,
			RetryHeaders.COUNT, RetryHeaders.QUEUE, RetryHeaders.EXCEPTION, RetryHeaders.ERROR,
			RetryHeaders.PARKED_REASON, RetryHeaders.PARKED_AT, RetryHeaders.REPLAY_COUNT, RetryHeaders.REPLAYED_AT);

	private ScheduledProperties() {
	}

	/**
	 * Where a delayed send goes, and when.
	 *
	 * @param exchange the target exchange ({@code ""}: the default exchange)
	 * @param routingKey the routing key
	 * @param due when it is due; {@code null} when it carries no due time (a replayed
	 * one): at once
	 */
	record Target(String exchange, String routingKey, @Nullable Instant due) {

		boolean isDue(Instant now) {
			return this.due == null || !this.due.isAfter(now);
		}

	}

	/**
	 * The due time a delayed send carries: the time asked for, rounded up to a whole
	 * millisecond. Header {@code retry-due} holds milliseconds, and a time rounded down
	 * would let the last hop end up to a millisecond early.
	 * @param at the time asked for
	 * @return the due time
	 */
	static Instant dueAt(Instant at) {
		Instant millis = at.truncatedTo(ChronoUnit.MILLIS);
		return millis.equals(at) ? at : millis.plusMillis(1);
	}

	/**
	 * The properties a sent message enters the tiers with.
	 * @param sent the properties as the application sent them
	 * @param target where it goes and when
	 * @return the properties to publish (without a tier yet)
	 */
	static AMQP.BasicProperties entering(AMQP.BasicProperties sent, Target target) {
		Map<String, Object> headers = new LinkedHashMap<>();
		if (sent.getHeaders() != null) {
			headers.putAll(sent.getHeaders());
		}
		Object cc = headers.remove(CC);
		if (cc != null) {
			headers.put(RetryHeaders.ORIGINAL_CC, cc);
		}
		Object bcc = headers.remove(BCC);
		if (bcc != null) {
			headers.put(RetryHeaders.SEND_BCC, bcc);
		}
		if (sent.getExpiration() != null) {
			headers.put(RetryHeaders.ORIGINAL_EXPIRATION, sent.getExpiration());
		}
		if (sent.getDeliveryMode() == null || sent.getDeliveryMode() != PERSISTENT) {
			headers.put(RetryHeaders.SEND_DELIVERY_MODE, (sent.getDeliveryMode() != null) ? sent.getDeliveryMode() : 0);
		}
		headers.put(RetryHeaders.SEND_EXCHANGE, target.exchange());
		headers.put(RetryHeaders.SEND_ROUTING_KEY, target.routingKey());
		if (target.due() != null) {
			headers.put(RetryHeaders.DUE, target.due().toEpochMilli());
		}
		return sent.builder().headers(headers).expiration(null).deliveryMode(PERSISTENT).build();
	}

	/**
	 * Where a message that arrived in the scheduled queue goes.
	 * @param received its properties
	 * @return the target, or {@code null} when it is not a delayed send
	 */
	static @Nullable Target targetOf(AMQP.BasicProperties received) {
		Map<String, Object> headers = received.getHeaders();
		Object exchange = (headers != null) ? headers.get(RetryHeaders.SEND_EXCHANGE) : null;
		Object routingKey = (headers != null) ? headers.get(RetryHeaders.SEND_ROUTING_KEY) : null;
		if (exchange == null || routingKey == null) {
			return null;
		}
		return new Target(exchange.toString(), routingKey.toString(),
				RetryHeaderValues.epochMillis(headers.get(RetryHeaders.DUE)));
	}

	/**
	 * The tier a hop went through, from its {@code retry-tier} header.
	 * @param received the properties as received
	 * @param tiers the tiers
	 * @return the tier, or {@code null} when it came through none known here
	 */
	static @Nullable Duration tierOf(AMQP.BasicProperties received, TierLadder tiers) {
		Object tier = (received.getHeaders() != null) ? received.getHeaders().get(RetryHeaders.TIER) : null;
		if (tier == null) {
			return null;
		}
		return tiers.tiers()
			.stream()
			.filter((candidate) -> TierLadder.nameOf(candidate).equals(tier.toString()))
			.findFirst()
			.orElse(null);
	}

	/**
	 * The properties of the next hop (or of the first): the tier and who published it.
	 * @param properties the properties of the message in the tiers
	 * @param tier the tier of this hop, or {@code null} when it goes straight to the
	 * scheduled queue
	 * @param hop {@code <instance>@<epoch ms>}
	 * @return the properties to publish
	 */
	static AMQP.BasicProperties hop(AMQP.BasicProperties properties, @Nullable Duration tier, String hop) {
		Map<String, Object> headers = withoutDeliveryFacts(properties.getHeaders());
		headers.remove(RetryHeaders.TIER);
		if (tier != null) {
			headers.put(RetryHeaders.TIER, TierLadder.nameOf(tier));
		}
		headers.put(RetryHeaders.SEND_HOP, hop);
		return properties.builder().headers(headers).build();
	}

	/**
	 * The properties of a delayed send parked because its target did not take it: as in
	 * the tiers, with the reason, and its scheduled queue as origin, so that a replay
	 * sends it to its target again.
	 * @param received the properties as received in the scheduled queue
	 * @param scheduledQueue the scheduled queue
	 * @param error why
	 * @param now the time of parking
	 * @return the properties to park with
	 */
	static AMQP.BasicProperties parked(AMQP.BasicProperties received, String scheduledQueue, String error,
			Instant now) {
		Map<String, Object> headers = withoutDeliveryFacts(received.getHeaders());
		headers.remove(RetryHeaders.TIER);
		headers.remove(RetryHeaders.SEND_HOP);
		headers.put(RetryHeaders.QUEUE, scheduledQueue);
		headers.put(RetryHeaders.COUNT, 0L);
		headers.put(RetryHeaders.PARKED_REASON, ParkedReason.UNROUTABLE.value());
		headers.put(RetryHeaders.PARKED_AT, now.toEpochMilli());
		headers.put(RetryHeaders.EXCEPTION, DelayedSendException.class.getName());
		headers.put(RetryHeaders.ERROR, error);
		return received.builder().headers(headers).build();
	}

	/**
	 * The properties as the application sent them: the starter's headers and what the
	 * tiers added removed; {@code expiration}, {@code CC}, {@code BCC} and the delivery
	 * mode restored.
	 * @param received the properties as received in the scheduled queue
	 * @return the properties to publish to the target
	 */
	static AMQP.BasicProperties asSent(AMQP.BasicProperties received) {
		Map<String, Object> headers = withoutDeliveryFacts(received.getHeaders());
		AMQP.BasicProperties.Builder builder = received.builder();
		Object expiration = headers.get(RetryHeaders.ORIGINAL_EXPIRATION);
		builder.expiration((expiration != null) ? expiration.toString() : null);
		Object cc = headers.get(RetryHeaders.ORIGINAL_CC);
		Object bcc = headers.get(RetryHeaders.SEND_BCC);
		Object deliveryMode = headers.get(RetryHeaders.SEND_DELIVERY_MODE);
		if (deliveryMode instanceof Number mode) {
			builder.deliveryMode((mode.intValue() == 0) ? null : mode.intValue());
		}
		headers.keySet().removeAll(STARTER_HEADERS);
		if (cc != null) {
			headers.put(CC, cc);
		}
		if (bcc != null) {
			headers.put(BCC, bcc);
		}
		return builder.headers(headers).build();
	}

	private static Map<String, Object> withoutDeliveryFacts(@Nullable Map<String, Object> received) {
		Map<String, Object> headers = new LinkedHashMap<>();
		if (received != null) {
			headers.putAll(received);
		}
		headers.keySet().removeAll(DEAD_LETTERING);
		headers.keySet().removeAll(RetryHeaders.BROKER_DELIVERY_COUNTS);
		return headers;
	}

}
