package io.github.tieredretry.reliability.faultrun;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import io.github.tieredretry.reliability.consumer.FaultPlan;

/**
 * The plan of every message of a run, reproducible from a seed: exactly 20% fail 1 to 3
 * times and then succeed, 2% never succeed, 1% fail with a non-retryable exception, the
 * rest succeed at once; spread at random over the run.
 */
final class FaultPlans {

	private final FaultPlan[] plans;

	private FaultPlans(FaultPlan[] plans) {
		this.plans = plans;
	}

	static FaultPlans generate(int messages, long seed) {
		Random random = new Random(seed);
		List<Integer> order = new ArrayList<>(messages);
		for (int i = 0; i < messages; i++) {
			order.add(i);
		}
		Collections.shuffle(order, random);
		FaultPlan[] plans = new FaultPlan[messages];
		int failThenSucceed = messages / 5;
		int neverSucceed = messages / 50;
		int notRetryable = messages / 100;
		for (int position = 0; position < messages; position++) {
			int index = order.get(position);
			if (position < failThenSucceed) {
				plans[index] = FaultPlan.failThenSucceed(1 + random.nextInt(3));
			}
			else if (position < failThenSucceed + neverSucceed) {
				plans[index] = FaultPlan.neverSucceed();
			}
			else if (position < failThenSucceed + neverSucceed + notRetryable) {
				plans[index] = FaultPlan.notRetryable();
			}
			else {
				plans[index] = FaultPlan.succeed();
			}
		}
		return new FaultPlans(plans);
	}

	FaultPlan of(int index) {
		return this.plans[index];
	}

	int size() {
		return this.plans.length;
	}

	Map<FaultPlan.Behaviour, Integer> counts() {
		Map<FaultPlan.Behaviour, Integer> counts = new EnumMap<>(FaultPlan.Behaviour.class);
		for (FaultPlan plan : this.plans) {
			counts.merge(plan.behaviour(), 1, Integer::sum);
		}
		return counts;
	}

	/**
	 * The message id of a message: unique within a run, and the index can be read back
	 * from it.
	 * @param index the message's index
	 * @return the id
	 */
	static String messageId(int index) {
		return "fault-run-" + index;
	}

	/**
	 * The index in a message id.
	 * @param messageId the id
	 * @return the index, or -1 when the id is not one of the run's
	 */
	static int indexOf(String messageId) {
		if (!messageId.startsWith("fault-run-")) {
			return -1;
		}
		try {
			return Integer.parseInt(messageId.substring("fault-run-".length()));
		}
		catch (NumberFormatException ex) {
			return -1;
		}
	}

}
