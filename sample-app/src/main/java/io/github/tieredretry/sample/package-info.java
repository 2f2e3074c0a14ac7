/**
 * The sample application: orders with a flaky payment step, retried through delay tiers.
 */
@NullMarked
package io.github.tieredretry.sample;

import org.jspecify.annotations.NullMarked;
