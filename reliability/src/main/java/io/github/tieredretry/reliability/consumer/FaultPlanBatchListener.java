package io.github.tieredretry.reliability.consumer;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.listener.BatchListenerFailedException;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.RabbitListener;

/**
 * The batch variant of the listener under test ({@code --fault-run.batch=true}, with the
 * container's consumer-side batching): follows each message's {@link FaultPlan} and names
 * the messages that failed, each with its own cause, so that each is retried or parked on
 * its own.
 */
public class FaultPlanBatchListener {

	private final FaultPlanListener plans;

	public FaultPlanBatchListener(OutcomeJournal journal) {
		this.plans = new FaultPlanListener(journal);
	}

	@RabbitListener(id = "fault-run-batch", queues = "${fault-run.queue}", concurrency = "${fault-run.concurrency:4}")
	@RetryableListener(noRetryOn = PermanentFailureException.class)
	public void onMessages(List<Message> messages) {
		Map<Integer, Throwable> failures = new LinkedHashMap<>();
		for (int i = 0; i < messages.size(); i++) {
			try {
				this.plans.handle(messages.get(i));
			}
			catch (TransientFailureException | PermanentFailureException ex) {
				failures.put(i, ex);
			}
		}
		if (!failures.isEmpty()) {
			throw new BatchListenerFailedException(failures.size() + " of " + messages.size() + " failed", failures);
		}
	}

}
