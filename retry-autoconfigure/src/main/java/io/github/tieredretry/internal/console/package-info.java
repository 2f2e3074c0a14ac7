/**
 * The operations console: a web page to look at the retry tiers and the parking lot, and
 * to replay or purge failure groups; and the overview of the retry set-up that it shares
 * with the {@code retry} endpoint.
 * <p>
 * Internal: users see the endpoint, the page and the meters (docs/observability.md), not
 * these types; they may change in any release.
 */
@NullMarked
package io.github.tieredretry.internal.console;

import org.jspecify.annotations.NullMarked;
