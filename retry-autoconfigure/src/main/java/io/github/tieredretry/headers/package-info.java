/**
 * The names of the {@code retry-*} headers the starter writes on forwarded and parked
 * messages ({@link io.github.tieredretry.headers.RetryHeaders}).
 */
@NullMarked
package io.github.tieredretry.headers;

import org.jspecify.annotations.NullMarked;
