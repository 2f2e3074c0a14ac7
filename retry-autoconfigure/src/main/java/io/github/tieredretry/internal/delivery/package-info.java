/**
 * Internal: the path of every delivery of a retryable listener, whatever its shape or
 * protocol: the attempts, the one classification and decision per failure, and the
 * backend's way to wait for a retry.
 */
@NullMarked
package io.github.tieredretry.internal.delivery;

import org.jspecify.annotations.NullMarked;
