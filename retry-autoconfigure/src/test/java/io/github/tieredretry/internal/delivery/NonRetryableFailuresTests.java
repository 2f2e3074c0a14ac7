package io.github.tieredretry.internal.delivery;

import org.junit.jupiter.api.Test;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.support.ListenerExecutionFailedException;
import org.springframework.amqp.support.converter.MessageConversionException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link NonRetryableFailures}.
 */
class NonRetryableFailuresTests {

	@Test
	@SuppressWarnings("removal")
	void conversionFailureWrappedByTheListenerAdapterIsAPayloadFailure() {
		Throwable failure = new ListenerExecutionFailedException("Failed to convert message",
				new MessageConversionException("bad json"), new Message(new byte[0], new MessageProperties()));
		assertThat(NonRetryableFailures.isPayloadFailure(failure)).isTrue();
	}

	@Test
	void businessExceptionIsNotAPayloadFailure() {
		assertThat(NonRetryableFailures.isPayloadFailure(new IllegalStateException("gateway down"))).isFalse();
	}

	@Test
	void cyclicCauseChainIsDetectedWithoutLooping() {
		CyclicException first = new CyclicException("first");
		CyclicException second = new CyclicException("second");
		first.initCause(second);
		second.initCause(first);
		assertThat(NonRetryableFailures.hasCyclicCauseChain(first)).isTrue();
		assertThat(NonRetryableFailures.isPayloadFailure(first)).isFalse();
	}

	@Test
	void ordinaryCauseChainIsNotCyclic() {
		assertThat(NonRetryableFailures.hasCyclicCauseChain(new RuntimeException(new IllegalStateException())))
			.isFalse();
	}

	static final class CyclicException extends RuntimeException {

		CyclicException(String message) {
			super(message);
		}

	}

}
