package io.github.tieredretry.topology;

import java.util.Collection;
import java.util.List;
import java.util.stream.Collectors;

import org.springframework.amqp.core.Declarable;
import org.springframework.amqp.core.Declarables;

/**
 * The retry topology as a {@link Declarables} bean, so the application's {@code RabbitAdmin} declares it
 * whenever a connection is (re)established. The content is live: work-queue bindings registered after
 * the bean was created are included in every later declaration.
 */
public final class RetryDeclarables extends Declarables {

	private final RetryTopology topology;

	public RetryDeclarables(RetryTopology topology) {
		super(List.of());
		this.topology = topology;
	}

	@Override
	public Collection<Declarable> getDeclarables() {
		return List.copyOf(this.topology.declarables());
	}

	@Override
	public <T extends Declarable> List<T> getDeclarablesByType(Class<? extends T> type) {
		return this.topology.declarables().stream().filter(type::isInstance).map(type::cast).collect(Collectors.toList());
	}

}
