package io.github.tieredretry.internal.delivery;

import java.util.concurrent.CompletableFuture;

import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * Reactor's {@link Mono} as an {@link AsyncResult}. Loaded only when Reactor is on the
 * class path: the starter does not depend on it.
 */
public final class MonoResults {

	private MonoResults() {
	}

	static boolean isMono(Object value) {
		return value instanceof Mono;
	}

	/**
	 * Subscribe to a {@code Mono}: it completes when the {@code Mono} completes, with or
	 * without a value, and fails with its error; cancelling disposes the subscription
	 * (which cancels a Kotlin coroutine).
	 * @param value the {@code Mono}
	 * @return its result
	 */
	static AsyncResult subscribe(Object value) {
		CompletableFuture<Void> completion = new CompletableFuture<>();
		Disposable subscription = ((Mono<?>) value).subscribe((next) -> {
		}, completion::completeExceptionally, () -> completion.complete(null));
		return new AsyncResult(completion, subscription::dispose, "Mono");
	}

}
