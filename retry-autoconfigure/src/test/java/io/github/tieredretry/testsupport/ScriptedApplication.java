package io.github.tieredretry.testsupport;

import io.github.tieredretry.annotation.RetryableListener;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * The application of the tests that need one retryable listener and nothing else: it
 * follows each message's {@link Script} on the class's queue of role {@code work}
 * ({@code test.queues.work}, from {@link RetrySettings}), with the default policy, which
 * the test configures by properties. Select it with
 * {@code @SpringBootTest(classes = ScriptedApplication.class)}. Its listener's id is
 * {@value #LISTENER_ID}; {@code test.auto-startup=false} leaves it stopped until the test
 * starts it.
 */
@Configuration(proxyBeanMethods = false)
@Import(RecordingApplication.class)
public class ScriptedApplication {

	/** The id of the listener's container. */
	public static final String LISTENER_ID = "scripted";

	@Bean
	Listener scriptedListener(InvocationRecorder recorder) {
		return new Listener(recorder);
	}

	/** Runs the script of each message of the work queue. */
	public static class Listener extends ScriptedListener {

		Listener(InvocationRecorder recorder) {
			super(recorder);
		}

		@RabbitListener(id = LISTENER_ID, queuesToDeclare = @Queue("${test.queues.work}"),
				autoStartup = "${test.auto-startup:true}")
		@RetryableListener
		void onMessage(Message message) {
			run(message);
		}

	}

}
