/**
 * Plain AMQP client access to the benchmark broker: publishing backlogs, purging,
 * cleaning up.
 */
@NullMarked
package io.github.tieredretry.benchmarks.broker;

import org.jspecify.annotations.NullMarked;
