package io.github.tieredretry.internal.delivery;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.rabbitmq.client.Channel;
import io.github.tieredretry.internal.settlement.Acknowledgement;
import io.github.tieredretry.listener.ListenerGate;
import org.jspecify.annotations.Nullable;

/**
 * Runs deliveries of one retryable listener through its gate and the listener until each
 * is settled, whatever the listener's shape: one call per round, with one message or a
 * batch, whose result is known when the listener returns or later (an asynchronous
 * result). Each delivery's outcome goes through {@link DeliveryOutcomes}: processed,
 * tried again at once (the policy's immediate retries, or a batch's messages the listener
 * did not attempt), retried or parked on its own, or held for the breaker's next probe.
 * <p>
 * A round starts on the consumer thread, which waits at the gate while the listener is
 * paused. An asynchronous result is followed without waiting, and its round ends on a
 * listener thread, except on a breaker's probe: the consumer waits for a probe's outcome
 * (bounded by the attempt timeout), so that a failed probe is held by the consumer like
 * any other.
 */
public final class RetryRounds {

	/** Makes the call of a round: one message, or a batch. */
	interface Calls {

		ListenerCall callFor(List<Delivery> round, Channel channel);

	}

	private final DeliveryOutcomes outcomes;

	private final ListenerGate gate;

	private final Calls calls;

	RetryRounds(DeliveryOutcomes outcomes, Calls calls) {
		this.outcomes = outcomes;
		this.gate = outcomes.gate();
		this.calls = calls;
	}

	/**
	 * Run deliveries until each is settled or follows its asynchronous result; on the
	 * consumer thread.
	 * @param deliveries the deliveries, all from the channel given
	 * @param channel the channel they arrived on, as the container exposes it
	 * @throws Exception what the listener threw that no delivery can survive (a
	 * {@link VirtualMachineError})
	 */
	void run(List<Delivery> deliveries, Channel channel) throws Exception {
		List<Delivery> round = deliveries;
		while (!round.isEmpty()) {
			// While the listener's circuit breaker is open its consumers wait here,
			// holding these messages.
			ListenerGate.Passage passage = this.gate.awaitPassage();
			if (passage == ListenerGate.Passage.STOPPED) {
				// Given back now, it could come straight back to this consumer, which
				// still consumes: its channel gives it back once the container stops.
				round.forEach((delivery) -> delivery.acknowledgement().leaveToChannel());
				return;
			}
			if (!round.get(0).acknowledgement().isChannelOpen()) {
				// The broker took them back while they waited (a consumer timeout, a lost
				// connection) and delivers them again: processing them here would make
				// duplicates.
				this.gate.ignored();
				return;
			}
			round = attempt(round, channel, passage);
		}
	}

	// Calls the listener until every delivery of the round is settled, follows an
	// asynchronous result, or is held for the next probe (returned).
	private List<Delivery> attempt(List<Delivery> round, Channel channel, ListenerGate.Passage passage)
			throws Exception {
		List<Delivery> held = new ArrayList<>();
		List<Delivery> current = round;
		while (!current.isEmpty()) {
			ListenerCall call = this.calls.callFor(current, channel);
			long started = System.nanoTime();
			AsyncResult pending = null;
			Throwable failure = null;
			try {
				pending = call.call();
			}
			catch (Throwable ex) {
				if (ListenerFailures.isFatal(ex)) {
					// The JVM is in trouble: the messages are left to the broker.
					this.gate.ignored();
					throw ex;
				}
				// Any other Error (a StackOverflowError, say) is the listener's bug in
				// this message: retried and parked like an exception, never allowed to
				// stop the queue's consumer.
				failure = ex;
			}
			if (pending != null) {
				if (passage != ListenerGate.Passage.PROBE) {
					follow(current, call, pending, started, channel);
					return held;
				}
				failure = this.outcomes.async().await(pending);
			}
			current = settle(current, call, failure, started, passage, held);
		}
		return held;
	}

	private void follow(List<Delivery> round, ListenerCall call, AsyncResult pending, long started, Channel channel) {
		List<Acknowledgement> holding = round.stream().map(Delivery::acknowledgement).toList();
		this.outcomes.async().whenDone(pending, holding, (failure) -> {
			List<Delivery> again = settle(round, call, failure, started, ListenerGate.Passage.PASS, new ArrayList<>());
			try {
				if (!again.isEmpty() && again.get(0).acknowledgement().isChannelOpen()) {
					attempt(again, channel, ListenerGate.Passage.PASS);
				}
			}
			catch (Throwable ex) {
				for (Delivery delivery : again) {
					this.outcomes.settleUnhandled(delivery.message(), delivery.acknowledgement(), ex);
				}
			}
		});
	}

	// What each delivery's outcome calls for; returns the deliveries to call the
	// listener with again at once.
	private List<Delivery> settle(List<Delivery> round, ListenerCall call, @Nullable Throwable failure, long started,
			ListenerGate.Passage passage, List<Delivery> held) {
		Duration took = Duration.ofNanos(System.nanoTime() - started);
		List<ListenerCall.Outcome> results = call.outcomes(failure);
		List<Delivery> again = new ArrayList<>();
		List<Delivery> processed = new ArrayList<>(round.size());
		for (int i = 0; i < round.size(); i++) {
			Delivery delivery = round.get(i);
			ListenerCall.Outcome result = results.get(i);
			if (!result.attempted()) {
				again.add(delivery);
				continue;
			}
			int attempts = delivery.attempted();
			Throwable failed = result.failure();
			if (failed == null) {
				processed.add(delivery);
			}
			else if (DeliveryOutcomes.asksContainerToAckOrRequeue(failed)) {
				// The listener asked the container explicitly (the adapter wraps it).
				this.gate.ignored();
				this.outcomes.settleUnhandled(delivery.message(), delivery.acknowledgement(), failed);
			}
			else {
				// Classified once per failure: an application's classifier may count or
				// log.
				boolean retryable = this.outcomes.isRetryable(failed);
				if (attempts < this.outcomes.attemptsFor(delivery) && retryable) {
					again.add(delivery);
				}
				else if (this.outcomes.failed(delivery, failed, retryable, passage, took)) {
					delivery.heldForProbe();
					held.add(delivery);
				}
			}
		}
		if (!processed.isEmpty()) {
			this.outcomes.processed(processed, took);
		}
		return again;
	}

}
