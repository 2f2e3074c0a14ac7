/**
 * Internal: the retry decisions in plain Java (delays, tier selection, retry or park,
 * policy resolution from annotations and properties); no Spring or broker types beyond
 * Spring's back-off and retry policy. Not an API: it may change in any release.
 */
@NullMarked
package io.github.tieredretry.internal.policy;

import org.jspecify.annotations.NullMarked;
