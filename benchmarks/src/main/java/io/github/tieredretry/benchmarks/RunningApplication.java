package io.github.tieredretry.benchmarks;

import java.util.Map;

import io.github.tieredretry.benchmarks.app.Workload;
import io.github.tieredretry.benchmarks.app.Workloads;

import org.springframework.amqp.core.MessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A Spring Boot application of the run, started programmatically in this JVM.
 */
final class RunningApplication implements AutoCloseable {

	private final String name;

	private final ConfigurableApplicationContext context;

	private RunningApplication(String name, ConfigurableApplicationContext context) {
		this.name = name;
		this.context = context;
	}

	/**
	 * Start an application.
	 * @param name its name in the harness' log
	 * @param source its configuration class
	 * @param properties its properties; they win over any other property source
	 * @return the running application
	 */
	static RunningApplication start(String name, Class<?> source, Map<String, String> properties) {
		String[] arguments = properties.entrySet()
			.stream()
			.map((entry) -> "--" + entry.getKey() + "=" + entry.getValue())
			.toArray(String[]::new);
		ConfigurableApplicationContext context = new SpringApplicationBuilder(source).web(WebApplicationType.NONE)
			.bannerMode(Banner.Mode.OFF)
			.logStartupInfo(false)
			.run(arguments);
		return new RunningApplication(name, context);
	}

	String name() {
		return this.name;
	}

	ConfigurableApplicationContext context() {
		return this.context;
	}

	MessageListenerContainer container(String listenerId) {
		MessageListenerContainer container = this.context.getBean(RabbitListenerEndpointRegistry.class)
			.getListenerContainer(listenerId);
		if (container == null) {
			throw new IllegalStateException("No listener '" + listenerId + "' in application " + this.name);
		}
		return container;
	}

	Workload workload(String queue) {
		return this.context.getBean(Workloads.class).forQueue(queue);
	}

	@Override
	public void close() {
		this.context.close();
	}

}
