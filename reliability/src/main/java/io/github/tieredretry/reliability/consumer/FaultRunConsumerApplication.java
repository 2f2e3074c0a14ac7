package io.github.tieredretry.reliability.consumer;

import java.nio.file.Path;
import java.util.Map;

import io.github.tieredretry.event.MessageParkedEvent;
import io.github.tieredretry.event.RetryScheduledEvent;
import io.github.tieredretry.topology.QueueType;

import org.springframework.amqp.core.Queue;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;

/**
 * The consuming application of the fault run, started by the harness in a JVM of its own
 * (so that it can be killed with SIGKILL) with the harness's classpath: <pre>
 * java -cp ... io.github.tieredretry.reliability.consumer.FaultRunConsumerApplication \
 *     --spring.rabbitmq.port=... --fault-run.queue=... --fault-run.journal=... --retry.queue-type=quorum
 * </pre> Its defaults are in {@code fault-run-consumer.properties}.
 */
@SpringBootApplication
public class FaultRunConsumerApplication {

	public static void main(String[] args) {
		new SpringApplicationBuilder(FaultRunConsumerApplication.class)
			// Its own file name: nothing else on the harness's classpath can configure
			// this app by accident.
			.properties("spring.config.name=fault-run-consumer")
			.run(args);
	}

	@Bean
	Queue faultRunWorkQueue(@Value("${fault-run.queue}") String name,
			@Value("${retry.queue-type:classic}") QueueType queueType) {
		return new Queue(name, true, false, false, workQueueArguments(queueType));
	}

	/**
	 * The work queue's arguments; the harness declares the queue with the same ones
	 * before it publishes.
	 * @param queueType the run's queue type (work queue and tiers alike)
	 * @return the arguments
	 */
	public static Map<String, Object> workQueueArguments(QueueType queueType) {
		return (queueType == QueueType.QUORUM) ? Map.of("x-queue-type", "quorum") : Map.of();
	}

	@Bean(destroyMethod = "close")
	OutcomeJournal outcomeJournal(@Value("${fault-run.journal}") Path journal) {
		return new OutcomeJournal(journal);
	}

	@Bean
	@ConditionalOnProperty(name = "fault-run.batch", havingValue = "false", matchIfMissing = true)
	FaultPlanListener faultPlanListener(OutcomeJournal journal) {
		return new FaultPlanListener(journal);
	}

	/**
	 * The batch variant: with {@code --fault-run.batch=true} and the container's
	 * consumer-side batching
	 * ({@code spring.rabbitmq.listener.simple.consumer-batch-enabled}).
	 * @param journal the journal
	 * @return the listener
	 */
	@Bean
	@ConditionalOnProperty(name = "fault-run.batch", havingValue = "true")
	FaultPlanBatchListener faultPlanBatchListener(OutcomeJournal journal) {
		return new FaultPlanBatchListener(journal);
	}

	@Bean
	JournaledEvents journaledEvents(OutcomeJournal journal) {
		return new JournaledEvents(journal);
	}

	/**
	 * Journals parked messages so that the harness can follow progress (the parking lot,
	 * not this line, is what the final accounting trusts), and confirmed forwards to
	 * tiers.
	 */
	static class JournaledEvents {

		private final OutcomeJournal journal;

		JournaledEvents(OutcomeJournal journal) {
			this.journal = journal;
		}

		/**
		 * The event follows the confirm, so the message entered its tier between the
		 * failure (due minus delay) and now; the run's tiers equal its delays, so it
		 * expires between due and now plus delay.
		 * @param event the scheduled retry
		 */
		@EventListener
		void onRetryScheduled(RetryScheduledEvent event) {
			String messageId = event.messageId();
			if (messageId != null) {
				this.journal.retryScheduled(messageId, event.due().toEpochMilli(),
						System.currentTimeMillis() + event.delay().toMillis());
			}
		}

		@EventListener
		void onParked(MessageParkedEvent event) {
			String messageId = event.messageId();
			if (messageId != null) {
				this.journal.parked(messageId);
			}
		}

	}

}
