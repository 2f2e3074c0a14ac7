/**
 * The benchmark harness: six benchmarks against a real broker, each comparison measured
 * side by side.
 */
@NullMarked
package io.github.tieredretry.benchmarks;

import org.jspecify.annotations.NullMarked;
