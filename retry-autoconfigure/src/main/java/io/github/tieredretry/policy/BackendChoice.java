package io.github.tieredretry.policy;

import java.util.Map;

import io.github.tieredretry.annotation.Backend;
import org.jspecify.annotations.Nullable;

/**
 * Which backend a listener's retries run on, and why: {@link Backend#BROKER} only where
 * the broker is RabbitMQ 4.3 or later and every queue of the listener is a quorum queue
 * whose delayed retry produces exactly the policy's delays, with a delivery limit that
 * lets every retry happen; the tiers everywhere else. A listener that asked for the
 * broker and cannot have it gets a {@link #problem() problem} and its fix instead of
 * other delays in silence. The starter makes the choice (at startup, and again when the
 * broker it talks to changes); this record is what it chose.
 *
 * @param backend the backend that runs ({@link Backend#TIERS} or {@link Backend#BROKER})
 * @param reason why, in words for the startup line and the endpoint
 * @param problem when the broker was asked for and cannot be had: why not, else
 * {@code null}
 * @param fix what to do about the problem, or {@code null}
 */
public record BackendChoice(Backend backend, String reason, @Nullable String problem, @Nullable String fix) {

	/**
	 * What the starter knows of a queue a listener consumes.
	 *
	 * @param name the queue
	 * @param arguments its arguments, or {@code null} when the application cannot see
	 * them (not declared by it)
	 */
	public record QueueFacts(String name, @Nullable Map<String, ?> arguments) {
	}

}
