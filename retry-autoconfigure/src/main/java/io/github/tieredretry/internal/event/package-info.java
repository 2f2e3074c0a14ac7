/**
 * Internal: publishes the starter's application events on its event thread. Not an API:
 * it may change in any release.
 */
@NullMarked
package io.github.tieredretry.internal.event;

import org.jspecify.annotations.NullMarked;
