package io.github.tieredretry.parkinglot;

import com.fasterxml.jackson.annotation.JsonValue;

/**
 * Why a parked message that a replay was asked to move is still parked. Serialised as its
 * {@link #value()}, e.g. {@code origin-queue-missing}.
 */
public enum StayReason {

	/** The origin queue does not exist any more: the broker returned the publish. */
	ORIGIN_QUEUE_MISSING("origin-queue-missing"),

	/**
	 * The message has no {@code retry-queue} header: there is nowhere to replay it to.
	 */
	NO_ORIGIN_QUEUE("no-origin-queue"),

	/**
	 * The broker nacked the publish or did not confirm it in time; the replay stopped
	 * there and every later message stays parked.
	 */
	PUBLISH_FAILED("publish-failed"),

	/**
	 * RabbitMQ blocks publishing (a memory or disk alarm): the replay stopped, and this
	 * message and every later matching one stay parked.
	 */
	BROKER_BLOCKED("broker-blocked");

	private final String value;

	StayReason(String value) {
		this.value = value;
	}

	/**
	 * The reason as it appears in results, e.g. {@code origin-queue-missing}.
	 * @return the value
	 */
	@JsonValue
	public String value() {
		return this.value;
	}

	@Override
	public String toString() {
		return this.value;
	}

}
