package io.github.tieredretry.parkinglot;

/**
 * How fast replays move parked messages.
 *
 * @param rate the most messages a replay publishes per second
 * @param batchSize the most messages one pass of a replay moves before it gives back the
 * messages it holds and starts the next pass
 */
public record ReplaySettings(double rate, int batchSize) {

	/** Replay settings by default: 50 messages per second, in batches of 100. */
	public static final ReplaySettings DEFAULTS = new ReplaySettings(50, 100);

	/**
	 * Create settings.
	 * @throws IllegalArgumentException when the rate or the batch size is not positive
	 */
	public ReplaySettings {
		if (!(rate > 0) || Double.isInfinite(rate)) {
			throw new IllegalArgumentException("rate must be a positive number of messages per second but was " + rate);
		}
		if (batchSize < 1) {
			throw new IllegalArgumentException("batchSize must be at least 1 but was " + batchSize);
		}
	}

}
