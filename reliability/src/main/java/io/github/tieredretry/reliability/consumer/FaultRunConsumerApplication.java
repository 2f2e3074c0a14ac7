package io.github.tieredretry.reliability.consumer;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
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

	/**
	 * The arguments of a run on the broker backend: linear delays (250 ms, 500 ms, 750
	 * ms, 1 s: the only kind a queue's delayed retry makes), which the work queue's
	 * delayed retry holds ({@link #workQueueArguments}).
	 */
	public static final List<String> BROKER_BACKEND_ARGUMENTS = List.of("--fault-run.broker-backend=true",
			"--retry.defaults.backend=broker", "--retry.defaults.delays=250ms, 500ms, 750ms, 1000ms");

	@Bean
	Queue faultRunWorkQueue(@Value("${fault-run.queue}") String name,
			@Value("${retry.queue-type:classic}") QueueType queueType,
			@Value("${fault-run.broker-backend:false}") boolean brokerBackend) {
		return new Queue(name, true, false, false, workQueueArguments(queueType, brokerBackend));
	}

	/**
	 * The work queue's arguments; the harness declares the queue with the same ones
	 * before it publishes.
	 * @param queueType the run's queue type (work queue and tiers alike)
	 * @param brokerBackend whether the retries run on the broker backend: the queue's
	 * delayed retry makes the delays of {@link #BROKER_BACKEND_ARGUMENTS}
	 * @return the arguments
	 */
	public static Map<String, Object> workQueueArguments(QueueType queueType, boolean brokerBackend) {
		Map<String, Object> arguments = new LinkedHashMap<>();
		if (queueType == QueueType.QUORUM) {
			arguments.put("x-queue-type", "quorum");
		}
		if (brokerBackend) {
			arguments.put("x-delayed-retry-type", "failed");
			arguments.put("x-delayed-retry-min", 250);
			arguments.put("x-delayed-retry-max", 1000);
		}
		return arguments;
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
