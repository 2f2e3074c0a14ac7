package io.github.tieredretry.internal.delivery;

import io.github.tieredretry.listener.BatchListenerFailedException;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.MessageListener;
import org.springframework.amqp.listener.adapter.DelegatingInvocableHandler;
import org.springframework.amqp.listener.adapter.HandlerAdapter;
import org.springframework.amqp.listener.adapter.InvocationResult;
import org.springframework.amqp.rabbit.listener.adapter.MessagingMessageListenerAdapter;
import org.springframework.beans.DirectFieldAccessor;
import org.springframework.messaging.Message;
import org.springframework.messaging.handler.invocation.InvocableHandlerMethod;

/**
 * What a retryable {@code @RabbitListener} method was given and returned, seen from
 * inside Spring AMQP's listener adapter: the payload (a batch listener's list, whose
 * elements a {@link BatchListenerFailedException} may name) and an asynchronous result.
 * <p>
 * The adapter would subscribe to a {@code CompletableFuture} or {@code Mono} itself and
 * ack or reject the message on the thread that completes it. Instead, the capture hands
 * the result to the starter and tells the adapter that the method returned nothing, so
 * the adapter settles nothing and the starter settles the message after the attempt, as
 * for any listener. Read on the consumer thread right after the adapter returns.
 */
public final class InvocationCapture {

	private final ThreadLocal<Invocation> current = new ThreadLocal<>();

	/**
	 * One invocation.
	 *
	 * @param payload what the method was given as its payload
	 * @param asyncResult what it returned, if that was a {@code CompletableFuture} or a
	 * {@code Mono}
	 */
	record Invocation(@Nullable Object payload, @Nullable Object asyncResult) {
	}

	/**
	 * Capture the invocations of a listener adapter, for a listener whose results or
	 * payloads the starter needs (asynchronous and batch listeners).
	 * @param listener the container's listener
	 * @return the capture, or {@code null} when the listener is not Spring AMQP's adapter
	 * of a listener method (or its handler cannot be read)
	 */
	public static @Nullable InvocationCapture install(MessageListener listener) {
		if (!(listener instanceof MessagingMessageListenerAdapter adapter)) {
			return null;
		}
		// Spring AMQP 4.1 offers a setter but no getter for the adapter's handler, and no
		// hook for its results: the fields are read, and a test pins their names.
		DirectFieldAccessor fields = new DirectFieldAccessor(adapter);
		if (!(fields.getPropertyValue("handlerAdapter") instanceof HandlerAdapter handler)) {
			return null;
		}
		DirectFieldAccessor handlerFields = new DirectFieldAccessor(handler);
		InvocationCapture capture = new InvocationCapture();
		if (handlerFields.getPropertyValue("invokerHandlerMethod") instanceof InvocableHandlerMethod method) {
			adapter.setHandlerAdapter(capture.new CapturingHandlerAdapter(method));
		}
		else if (handlerFields.getPropertyValue("delegatingHandler") instanceof DelegatingInvocableHandler delegating) {
			adapter.setHandlerAdapter(capture.new CapturingHandlerAdapter(delegating));
		}
		else {
			return null;
		}
		return capture;
	}

	/**
	 * Record what the method on this thread was given and returned.
	 * @param payload what it was given as its payload
	 * @param asyncResult what it returned, if asynchronous
	 */
	void captured(@Nullable Object payload, @Nullable Object asyncResult) {
		this.current.set(new Invocation(payload, asyncResult));
	}

	/** Forget what an earlier invocation on this thread left. */
	void clear() {
		this.current.remove();
	}

	/**
	 * What the last invocation on this thread was given and returned; clears it.
	 * @return the invocation, or {@code null} when the adapter did not reach the method
	 */
	@Nullable Invocation take() {
		Invocation invocation = this.current.get();
		this.current.remove();
		return invocation;
	}

	private final class CapturingHandlerAdapter extends HandlerAdapter {

		CapturingHandlerAdapter(InvocableHandlerMethod method) {
			super(method);
		}

		CapturingHandlerAdapter(DelegatingInvocableHandler delegating) {
			super(delegating);
		}

		@Override
		public InvocationResult invoke(Message<?> message, @Nullable Object... providedArgs) throws Exception {
			// The payload first: a batch listener that throws may name an element of it.
			captured(message.getPayload(), null);
			InvocationResult result = super.invoke(message, providedArgs);
			Object value = result.getReturnValue();
			if (!AsyncResult.isAsync(value)) {
				return result;
			}
			captured(message.getPayload(), value);
			return new InvocationResult(null, result.getSendTo(), result.getReturnType(), result.getBean(),
					result.getMethod());
		}

	}

}
