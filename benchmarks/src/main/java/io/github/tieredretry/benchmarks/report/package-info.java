/**
 * Results, their statistics, the charts and the Markdown report.
 */
@NullMarked
package io.github.tieredretry.benchmarks.report;

import org.jspecify.annotations.NullMarked;
