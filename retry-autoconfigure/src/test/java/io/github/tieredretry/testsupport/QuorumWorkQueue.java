package io.github.tieredretry.testsupport;

import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Declares the work queue of an application that a test starts itself as a quorum queue
 * (whose delayed retry the broker backend uses), named by {@code test.queues.work}.
 * Import it.
 */
@Configuration(proxyBeanMethods = false)
public class QuorumWorkQueue {

	@Bean
	Queue workQueue(Environment environment) {
		return QueueBuilder.durable(environment.getRequiredProperty("test.queues.work")).quorum().build();
	}

}
