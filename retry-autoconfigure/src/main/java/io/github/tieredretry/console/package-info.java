/**
 * The operations console: a web page to look at the retry tiers and the parking lot, and
 * to replay or purge failure groups; and the overview of the retry set-up that it shares
 * with the {@code retry} endpoint.
 */
@NullMarked
package io.github.tieredretry.console;

import org.jspecify.annotations.NullMarked;
