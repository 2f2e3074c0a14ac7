package io.github.tieredretry.internal.delivery;

import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

import org.springframework.util.ClassUtils;

/**
 * What an asynchronous listener returned: a {@link CompletableFuture}, or a Reactor
 * {@code Mono} (which Kotlin {@code suspend} listeners return too, through Spring), with
 * a way to cancel it when its attempt times out or the application stops.
 */
public final class AsyncResult {

	private static final boolean REACTOR_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Mono",
			AsyncResult.class.getClassLoader());

	private final CompletableFuture<?> completion;

	private final Runnable cancel;

	private final String kind;

	AsyncResult(CompletableFuture<?> completion, Runnable cancel, String kind) {
		this.completion = completion;
		this.cancel = cancel;
		this.kind = kind;
	}

	/**
	 * Whether a value a listener returned is an asynchronous result.
	 * @param value the value
	 * @return whether it is a {@link CompletableFuture} or a {@code Mono}
	 */
	static boolean isAsync(@Nullable Object value) {
		return value instanceof CompletableFuture || (value != null && REACTOR_PRESENT && MonoResults.isMono(value));
	}

	/**
	 * Follow a value a listener returned; a {@code Mono} is subscribed to now, on the
	 * calling thread.
	 * @param value the value
	 * @return the result, or {@code null} when the value is not asynchronous
	 */
	static @Nullable AsyncResult of(@Nullable Object value) {
		if (value instanceof CompletableFuture<?> future) {
			return new AsyncResult(future, () -> future.cancel(true), "CompletableFuture");
		}
		if (value != null && REACTOR_PRESENT && MonoResults.isMono(value)) {
			return MonoResults.subscribe(value);
		}
		return null;
	}

	/**
	 * Completes when the result does: normally, or exceptionally with its failure.
	 * @return the completion
	 */
	CompletableFuture<?> completion() {
		return this.completion;
	}

	/** Cancel the result: the future is cancelled, the {@code Mono} disposed. */
	void cancel() {
		try {
			this.cancel.run();
		}
		catch (RuntimeException ex) {
			// The listener's own cancellation failed; its outcome no longer counts.
		}
	}

	/**
	 * What the listener returned, for failure messages.
	 * @return {@code CompletableFuture} or {@code Mono}
	 */
	String kind() {
		return this.kind;
	}

}
