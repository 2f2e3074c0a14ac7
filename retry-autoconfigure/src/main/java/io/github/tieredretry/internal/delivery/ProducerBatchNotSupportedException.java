package io.github.tieredretry.internal.delivery;

/**
 * A message is a producer-side batch ({@code BatchingRabbitTemplate}): its messages share
 * one delivery, so none of them could be retried or parked on its own. Such a batch is
 * parked whole, untouched.
 */
public class ProducerBatchNotSupportedException extends RuntimeException {

	ProducerBatchNotSupportedException() {
		super("Batches sent with BatchingRabbitTemplate are not supported by @RetryableListener: the batch is "
				+ "parked whole. Send its messages one by one, or consume them with a listener without retries.");
	}

}
