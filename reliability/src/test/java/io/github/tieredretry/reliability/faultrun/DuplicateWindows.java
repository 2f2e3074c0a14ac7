package io.github.tieredretry.reliability.faultrun;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Places every duplicate outcome in the window of the last fault before it: a message
 * processed or parked more than once counts its later outcomes (by their time: the
 * journal's for processing, {@code
 * retry-parked-at} for parking) in the window that was open then. A window runs from its
 * fault to the next one; the first one from the start of the run to the first fault. The
 * producer's re-sent batches are placed the same way: a re-sent message that the broker
 * had already taken is one of the duplicates.
 */
final class DuplicateWindows {

	/**
	 * Duplicates in one window.
	 *
	 * @param label the fault that opened it, or {@code before the first fault}
	 * @param from when it opened, from the start of the run
	 * @param processed extra processing records
	 * @param parked extra parked copies
	 * @param resent messages the producer published again in it
	 */
	record Window(String label, Duration from, long processed, long parked, long resent) {

		long duplicates() {
			return this.processed + this.parked;
		}

	}

	private final long startedAt;

	private final List<FaultRun.AppliedFault> faults;

	private final long[] processed;

	private final long[] parked;

	private final long[] resent;

	DuplicateWindows(long startedAt, List<FaultRun.AppliedFault> faults) {
		this.startedAt = startedAt;
		this.faults = List.copyOf(faults);
		this.processed = new long[faults.size() + 1];
		this.parked = new long[faults.size() + 1];
		this.resent = new long[faults.size() + 1];
	}

	/**
	 * Count the duplicates of one message: all of its outcomes but the earliest.
	 * @param processedAt when it was processed, each time (epoch milliseconds)
	 * @param parkedAt when each of its parked copies was parked (epoch milliseconds, 0 if
	 * unknown)
	 */
	void duplicatesOf(List<Long> processedAt, List<Long> parkedAt) {
		List<long[]> outcomes = new ArrayList<>();
		processedAt.forEach((at) -> outcomes.add(new long[] { at, 0 }));
		parkedAt.forEach((at) -> outcomes.add(new long[] { at, 1 }));
		outcomes.sort(Comparator.comparingLong((outcome) -> outcome[0]));
		for (long[] outcome : outcomes.subList(Math.min(1, outcomes.size()), outcomes.size())) {
			long[] counts = (outcome[1] == 0) ? this.processed : this.parked;
			counts[windowOf(outcome[0])]++;
		}
	}

	void resent(long at, long messages) {
		this.resent[windowOf(at)] += messages;
	}

	List<Window> windows() {
		List<Window> windows = new ArrayList<>();
		windows.add(
				new Window("before the first fault", Duration.ZERO, this.processed[0], this.parked[0], this.resent[0]));
		for (int i = 0; i < this.faults.size(); i++) {
			FaultRun.AppliedFault fault = this.faults.get(i);
			windows.add(new Window(fault.type().description(), fault.at(), this.processed[i + 1], this.parked[i + 1],
					this.resent[i + 1]));
		}
		return windows;
	}

	private int windowOf(long at) {
		int window = 0;
		for (int i = 0; i < this.faults.size(); i++) {
			if (at >= this.faults.get(i).startedAt()) {
				window = i + 1;
			}
		}
		return (at < this.startedAt) ? 0 : window;
	}

}
