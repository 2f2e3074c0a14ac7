package io.github.tieredretry.policy;

import java.time.Duration;
import java.util.List;

import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;

/**
 * A {@link BackOff} that returns explicit delays in order and then repeats the last one, stopping after
 * a maximum number of retries. Configured through {@code delays = {"10s", "100s", "1h"}}.
 */
public final class DelaySequenceBackOff implements BackOff {

	private final List<Duration> delays;

	private final long maxRetries;

	/**
	 * Create a back-off.
	 * @param delays the delays before retry 1, 2, ...; must not be empty
	 * @param maxRetries how many delays are handed out before {@link BackOffExecution#STOP}
	 */
	public DelaySequenceBackOff(List<Duration> delays, long maxRetries) {
		if (delays.isEmpty()) {
			throw new IllegalArgumentException("delays must not be empty");
		}
		this.delays = List.copyOf(delays);
		this.maxRetries = maxRetries;
	}

	/**
	 * The delay before the given retry, without iterating.
	 * @param retry the retry number, starting at 1
	 * @return the delay
	 */
	public Duration delayBefore(long retry) {
		int index = (int) Math.min(retry, this.delays.size()) - 1;
		return this.delays.get(Math.max(index, 0));
	}

	public List<Duration> delays() {
		return this.delays;
	}

	@Override
	public BackOffExecution start() {
		return new BackOffExecution() {

			private long retry;

			@Override
			public long nextBackOff() {
				if (this.retry >= DelaySequenceBackOff.this.maxRetries) {
					return STOP;
				}
				this.retry++;
				return delayBefore(this.retry).toMillis();
			}

		};
	}

	@Override
	public String toString() {
		return "DelaySequenceBackOff" + this.delays;
	}

}
