/**
 * Internal: the startup of retryable listeners. Wraps the containers of listeners marked
 * {@code @RetryableListener}, resolves each one's policy and backend, refuses what it
 * cannot serve, and stops them in order.
 */
@NullMarked
package io.github.tieredretry.internal.install;

import org.jspecify.annotations.NullMarked;
