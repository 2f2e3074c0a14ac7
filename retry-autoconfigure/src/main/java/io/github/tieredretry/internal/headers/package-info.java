/**
 * Internal: writing and reading the values of the {@code retry-*} headers (failure
 * details, header changes on a forward). Not an API: it may change in any release.
 */
@NullMarked
package io.github.tieredretry.internal.headers;

import org.jspecify.annotations.NullMarked;
