/**
 * Production conditions on a RabbitMQ node of the harness's own: resource alarms,
 * publishes the broker refuses.
 */
@NullMarked
package io.github.tieredretry.reliability.conditions;

import org.jspecify.annotations.NullMarked;
