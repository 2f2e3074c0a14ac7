package io.github.tieredretry.internal.topology;

import java.util.Collection;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import org.springframework.amqp.core.Declarable;
import org.springframework.amqp.core.Declarables;

/**
 * The retry topology as a {@link Declarables} bean, so the application's
 * {@code RabbitAdmin} declares it whenever a connection is (re)established. The content
 * is live: work-queue bindings registered after the bean was created are included in
 * every later declaration.
 * <p>
 * It stays empty until the topology has been checked against the broker
 * ({@link RetryTopologyDeclarer}): otherwise the admin would declare it on the
 * application's first connection, before the check, and a start that then fails on a
 * conflicting queue would leave the other, new queues behind.
 */
public final class RetryDeclarables extends Declarables {

	private final RetryTopology topology;

	private final BooleanSupplier checked;

	/**
	 * Create the bean.
	 * @param topology the topology
	 * @param checked whether the topology has been checked and may be declared
	 */
	public RetryDeclarables(RetryTopology topology, BooleanSupplier checked) {
		super(List.of());
		this.topology = topology;
		this.checked = checked;
	}

	@Override
	public Collection<Declarable> getDeclarables() {
		return this.checked.getAsBoolean() ? List.copyOf(this.topology.declarables()) : List.of();
	}

	@Override
	public <T extends Declarable> List<T> getDeclarablesByType(Class<? extends T> type) {
		return getDeclarables().stream().filter(type::isInstance).map(type::cast).collect(Collectors.toList());
	}

}
