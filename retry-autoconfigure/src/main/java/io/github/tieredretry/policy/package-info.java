/**
 * Pure retry decisions: delays, tier selection, retry-or-park; no Spring or broker types
 * beyond Spring's back-off and retry policy.
 * <p>
 * Internal: public for the auto-configuration, not a stable API;
 * {@link io.github.tieredretry.policy.ParkedReason} is the exception (events and parked
 * messages carry it).
 */
@NullMarked
package io.github.tieredretry.policy;

import org.jspecify.annotations.NullMarked;
