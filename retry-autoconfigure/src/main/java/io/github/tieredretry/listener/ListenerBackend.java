package io.github.tieredretry.listener;

import java.util.List;
import java.util.function.Function;

import io.github.tieredretry.annotation.Backend;
import io.github.tieredretry.internal.policy.BackendChooser;
import io.github.tieredretry.policy.BackendChoice;
import io.github.tieredretry.policy.EffectiveRetryPolicy;
import org.jspecify.annotations.Nullable;

/**
 * Which backend one listener's retries run on. The choice needs the broker's version, so
 * it is made when the application first talks to the broker (before its listeners
 * consume); until then, and wherever the broker cannot hold the retries, the tiers run.
 */
public final class ListenerBackend {

	private final String listener;

	private final Backend requested;

	private final Function<String, BackendChoice> chooser;

	private final List<String> queues;

	private volatile @Nullable BackendChoice choice;

	private volatile @Nullable String brokerVersion;

	private volatile List<String> tierNotices = List.of();

	public ListenerBackend(String listener, Backend requested, EffectiveRetryPolicy policy,
			List<BackendChoice.QueueFacts> queues) {
		this.listener = listener;
		this.requested = requested;
		List<BackendChoice.QueueFacts> facts = List.copyOf(queues);
		this.chooser = (version) -> BackendChooser.choose(requested, policy, version, facts);
		this.queues = facts.stream().map(BackendChoice.QueueFacts::name).toList();
	}

	/**
	 * The backend of a listener that chooses by its own rules (the AMQP 1.0 client's).
	 * @param listener the listener
	 * @param requested what its policy asks for
	 * @param chooser chooses for a broker version
	 */
	public ListenerBackend(String listener, Backend requested, Function<String, BackendChoice> chooser) {
		this.listener = listener;
		this.requested = requested;
		this.chooser = chooser;
		// Its queue's arguments do not depend on its backend.
		this.queues = List.of();
	}

	/**
	 * Choose, for the broker the application talks to.
	 * @param version the broker's version
	 * @return the choice
	 */
	public BackendChoice choose(String version) {
		BackendChoice chosen = this.chooser.apply(version);
		this.brokerVersion = version;
		this.choice = chosen;
		return chosen;
	}

	/**
	 * Say what the tiers serve only approximately, should this listener run on them.
	 * @param notices the startup notices about its delays on the tiers
	 */
	public void onTheTiersNotice(List<String> notices) {
		this.tierNotices = List.copyOf(notices);
	}

	/**
	 * The startup notices about this listener's delays on the tiers.
	 * @return the notices, empty when the tiers serve them as asked
	 */
	public List<String> tierNotices() {
		return this.tierNotices;
	}

	/**
	 * Whether the broker holds this listener's retries.
	 * @return whether the broker backend runs
	 */
	public boolean isBroker() {
		BackendChoice chosen = this.choice;
		return chosen != null && chosen.backend() == Backend.BROKER;
	}

	/**
	 * Whether the choice depends on the arguments the application declares its queues
	 * with (else it reads the queue on the broker).
	 * @return whether it does: for a listener of an AMQP 0-9-1 container
	 */
	public boolean choosesFromDeclaredArguments() {
		return !this.queues.isEmpty();
	}

	/**
	 * The queues whose arguments the choice was made for.
	 * @return the queues of an AMQP 0-9-1 listener; none for the AMQP 1.0 client's
	 */
	public List<String> queues() {
		return this.queues;
	}

	public String listener() {
		return this.listener;
	}

	/**
	 * What the listener's policy asks for.
	 * @return the requested backend
	 */
	public Backend requested() {
		return this.requested;
	}

	/**
	 * The choice, once the broker's version is known.
	 * @return the choice, or {@code null} before the application first connected
	 */
	public @Nullable BackendChoice choice() {
		return this.choice;
	}

	/**
	 * The version of the broker the choice was made for.
	 * @return e.g. {@code 4.3.6}, or {@code null} before the application first connected
	 */
	public @Nullable String brokerVersion() {
		return this.brokerVersion;
	}

}
