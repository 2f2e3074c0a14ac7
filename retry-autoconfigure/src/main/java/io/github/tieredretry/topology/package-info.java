/**
 * The broker objects behind tiered retries (delay tiers, exchanges and the parking lot),
 * their queue type, and the errors a start-up reports when the broker holds them with
 * other arguments.
 */
@NullMarked
package io.github.tieredretry.topology;

import org.jspecify.annotations.NullMarked;
