/**
 * Pure retry decisions: delays, tier selection, retry-or-park; no Spring or broker types beyond Spring's back-off and retry policy.
 */
@NullMarked
package io.github.tieredretry.policy;

import org.jspecify.annotations.NullMarked;
