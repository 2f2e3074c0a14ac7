/**
 * The limit side: the least a consumer written directly against the RabbitMQ Java client
 * does for tiered retries, to show what the broker allows.
 */
@NullMarked
package io.github.tieredretry.benchmarks.limit;

import org.jspecify.annotations.NullMarked;
