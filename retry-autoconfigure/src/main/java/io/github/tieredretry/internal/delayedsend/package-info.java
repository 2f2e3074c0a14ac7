/**
 * Internal: how a delayed send moves through the tiers and the application's scheduled
 * queue, and how the hops on their way are counted. Not an API: it may change in any
 * release.
 */
@NullMarked
package io.github.tieredretry.internal.delayedsend;

import org.jspecify.annotations.NullMarked;
