package io.github.tieredretry.observation;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * The starter's observations, their names and keys. Every low-cardinality key is always
 * present, with {@value #NONE} where it does not apply (Prometheus needs one set of tag
 * keys per meter name).
 */
public enum RetryObservationDocumentation implements ObservationDocumentation {

	/**
	 * A failed message forwarded to a delay tier or to the parking lot, from the start of
	 * the publish to the broker's confirm (or the forward's failure). Its span is a child
	 * of the attempt's processing span.
	 */
	FORWARD {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultRetryForwardObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return LowCardinalityKeys.values();
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return new KeyName[] { HighCardinalityKeys.ATTEMPT, HighCardinalityKeys.DELAY,
					HighCardinalityKeys.MESSAGE_ID };
		}

	},

	/**
	 * A parked message published back to its origin queue, until the broker's confirm.
	 * Its span starts a new trace (or is a child of the replaying thread's observation)
	 * with a link to the trace it was parked in.
	 */
	REPLAY {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultRetryReplayObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return new KeyName[] { LowCardinalityKeys.QUEUE, LowCardinalityKeys.OUTCOME, LowCardinalityKeys.EXCEPTION,
					LowCardinalityKeys.REASON };
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return new KeyName[] { HighCardinalityKeys.MESSAGE_ID, HighCardinalityKeys.REPLAY };
		}

	};

	/** The value of a key that does not apply. */
	public static final String NONE = "none";

	/** Low-cardinality keys: bounded values, tags of metrics and spans. */
	public enum LowCardinalityKeys implements KeyName {

		/** The queue whose listener failed (forward), or the origin queue (replay). */
		QUEUE("queue"),

		/** The tier the message waits in, e.g. {@code 10s}. */
		TIER("tier"),

		/**
		 * {@code retried}, {@code parked} or {@code hop} (forward); {@code replayed} or
		 * {@code stayed} (replay).
		 */
		OUTCOME("outcome"),

		/**
		 * The simple class name of the listener's exception (forward), or of the one it
		 * was parked for (replay).
		 */
		EXCEPTION("exception"),

		/** Why it was parked (forward), or why it stayed parked (replay). */
		REASON("reason");

		private final String key;

		LowCardinalityKeys(String key) {
			this.key = key;
		}

		@Override
		public String asString() {
			return this.key;
		}

	}

	/** High-cardinality keys: span tags only. */
	public enum HighCardinalityKeys implements KeyName {

		/**
		 * The attempt the message was delivered for: 1 for the first delivery, 2 for the
		 * first retry, ...
		 */
		ATTEMPT("attempt"),

		/**
		 * The delay before the retry a forward schedules, in milliseconds (e.g.
		 * {@code 4613ms}): the policy's, drawn with its jitter. Only on forwards that
		 * schedule a retry.
		 */
		DELAY("delay"),

		/** The message's {@code message-id}, when it has one. */
		MESSAGE_ID("messaging.message.id"),

		/** How often the message has been replayed, this replay included. */
		REPLAY("replay");

		private final String key;

		HighCardinalityKeys(String key) {
			this.key = key;
		}

		@Override
		public String asString() {
			return this.key;
		}

	}

}
