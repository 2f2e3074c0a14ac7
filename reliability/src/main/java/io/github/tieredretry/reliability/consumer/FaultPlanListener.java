package io.github.tieredretry.reliability.consumer;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.headers.RetryHeaders;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.annotation.RabbitListener;

/**
 * The retryable listener under test: follows each message's {@link FaultPlan} and
 * journals a success before returning, so that the container acks only recorded work.
 */
public class FaultPlanListener {

	private final OutcomeJournal journal;

	public FaultPlanListener(OutcomeJournal journal) {
		this.journal = journal;
	}

	@RabbitListener(id = "fault-run", queues = "${fault-run.queue}", concurrency = "${fault-run.concurrency:4}")
	@RetryableListener(noRetryOn = PermanentFailureException.class)
	public void onMessage(Message message) {
		handle(message);
	}

	/**
	 * Follow one message's plan.
	 * @param message the message
	 */
	public void handle(Message message) {
		MessageProperties properties = message.getMessageProperties();
		String id = properties.getMessageId();
		FaultPlan plan = FaultPlan.parse(properties.getHeaders().get(FaultPlan.HEADER));
		long retryCount = properties.getRetryCount();
		journalReplay(id, properties);
		switch (plan.behaviour()) {
			case SUCCEED -> this.journal.processed(id);
			case FAIL_THEN_SUCCEED -> {
				if (retryCount < plan.failures()) {
					this.journal.failed(id);
					throw new TransientFailureException(
							"Scripted failure " + (retryCount + 1) + " of " + plan.failures() + " for " + id);
				}
				this.journal.processed(id);
			}
			case NEVER_SUCCEED -> {
				this.journal.failed(id);
				throw new TransientFailureException(
						"Scripted failure for " + id + " (never succeeds), retry " + retryCount);
			}
			case NOT_RETRYABLE -> {
				this.journal.failed(id);
				throw new PermanentFailureException("Scripted permanent failure for " + id);
			}
		}
	}

	private void journalReplay(String id, MessageProperties properties) {
		Object replayCount = properties.getHeaders().get(RetryHeaders.REPLAY_COUNT);
		Object replayedAt = properties.getHeaders().get(RetryHeaders.REPLAYED_AT);
		if (replayCount instanceof Number count && replayedAt instanceof Number at) {
			this.journal.replayed(id, count.longValue(), at.longValue());
		}
	}

}
