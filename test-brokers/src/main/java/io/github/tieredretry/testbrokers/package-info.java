/**
 * The harness's own RabbitMQ: a local node, a cluster of local nodes, or a container;
 * never a shared broker.
 */
@NullMarked
package io.github.tieredretry.testbrokers;

import org.jspecify.annotations.NullMarked;
