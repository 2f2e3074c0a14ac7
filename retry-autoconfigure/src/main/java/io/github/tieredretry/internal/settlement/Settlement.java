package io.github.tieredretry.internal.settlement;

/**
 * How one delivery is settled with the broker, whatever the protocol: an AMQP 0-9-1
 * acknowledgement on the consumer's channel ({@link Acknowledgement}), or the AMQP 1.0
 * client's consumer context ({@link AmqpSettlement}). The forwarding path
 * ({@link ForwardSender}, {@link HeldMessages}) settles through this only, so that its
 * safeguards hold on both: a pause per forward target, a bound on messages held while the
 * broker blocks publishers, and a held message given back when its consumer stops. Each
 * method settles at most once; later calls do nothing.
 */
public interface Settlement {

	/** The message is done with: processed, or forwarded and confirmed. */
	void ack();

	/**
	 * Back to its queue, as uncounted as the protocol allows ({@code basic.nack}, AMQP
	 * 1.0 {@code released}).
	 */
	void requeue();

	/**
	 * The application stops: leave the message to its consumer, which gives it back when
	 * it stops consuming.
	 */
	void leaveToChannel();

	/**
	 * Whether the consumer still holds the message; if not, the broker has it back
	 * already and forwarding it would make a duplicate.
	 * @return whether it is still held
	 */
	boolean isChannelOpen();

	/**
	 * Whether giving it back costs it nothing (no return counted towards a delivery
	 * limit).
	 * @return whether it may go back to its queue
	 */
	boolean mayRequeue();

	/**
	 * What holds the message: held messages are counted, and given back, per consumer.
	 * @return the consumer channel, or the AMQP 1.0 listener
	 */
	Object consumer();

}
