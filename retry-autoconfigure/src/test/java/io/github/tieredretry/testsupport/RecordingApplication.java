package io.github.tieredretry.testsupport;

import io.github.tieredretry.event.MessageParkedEvent;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * The base of the applications that integration tests run: Spring Boot's
 * auto-configuration with an {@link InvocationRecorder}, the {@link ScheduledRetries} and
 * the parked messages ({@link MessageEvents#parked()}), so that a test declares only its
 * own listeners. Name it with the test's listener classes: {@code @SpringBootTest(classes
 * = { RecordingApplication.class, Listeners.class })} (a listener declares its queue with
 * {@code queuesToDeclare}).
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
public class RecordingApplication {

	@Bean
	InvocationRecorder invocationRecorder() {
		return new InvocationRecorder();
	}

	@Bean
	ScheduledRetries scheduledRetries() {
		return new ScheduledRetries();
	}

	@Bean
	MessageEvents<MessageParkedEvent> parkedMessages() {
		return MessageEvents.parked();
	}

}
