/**
 * Micrometer observations of the starter's own steps (a forward to a tier or the parking
 * lot, a replay), their conventions, and the tracing handler that keeps a retried message
 * in one trace and links a replayed one to the trace it was parked in.
 */
@NullMarked
package io.github.tieredretry.observation;

import org.jspecify.annotations.NullMarked;
