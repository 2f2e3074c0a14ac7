/**
 * Internal: declaring, checking and guarding the broker objects behind tiered retries.
 * Not an API: it may change in any release.
 */
@NullMarked
package io.github.tieredretry.internal.topology;

import org.jspecify.annotations.NullMarked;
