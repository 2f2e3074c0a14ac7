/**
 * The values of a listener's retry policy that applications see: the effective policy
 * ({@link io.github.tieredretry.policy.EffectiveRetryPolicy}), the backend and breaker
 * settings, the reasons a message is parked, and a delay asked for by the application
 * ({@link io.github.tieredretry.policy.RetryAfter}).
 */
@NullMarked
package io.github.tieredretry.policy;

import org.jspecify.annotations.NullMarked;
