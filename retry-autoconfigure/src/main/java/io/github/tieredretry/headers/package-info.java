/**
 * Names and parsing of the {@code retry-*} headers the starter writes on forwarded and
 * parked messages.
 */
@NullMarked
package io.github.tieredretry.headers;

import org.jspecify.annotations.NullMarked;
