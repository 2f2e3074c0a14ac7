/**
 * The Spring Boot applications under measurement: the same listeners with and without
 * tiered retries.
 */
@NullMarked
package io.github.tieredretry.benchmarks.app;

import org.jspecify.annotations.NullMarked;
