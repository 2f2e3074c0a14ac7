/**
 * The broker objects behind tiered retries: delay tiers, exchanges and the parking lot.
 */
@NullMarked
package io.github.tieredretry.topology;

import org.jspecify.annotations.NullMarked;
