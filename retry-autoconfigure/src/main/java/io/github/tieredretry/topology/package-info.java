/**
 * The broker objects behind tiered retries: delay tiers, exchanges and the parking lot.
 * <p>
 * Internal: public for the auto-configuration, not a stable API.
 */
@NullMarked
package io.github.tieredretry.topology;

import org.jspecify.annotations.NullMarked;
