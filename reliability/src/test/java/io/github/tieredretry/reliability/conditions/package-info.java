/**
 * Production conditions on a RabbitMQ node of the harness's own: resource alarms,
 * publishes the broker refuses, RabbitMQ 4.3's delayed retry across restarts, leader
 * changes and by policy.
 */
@NullMarked
package io.github.tieredretry.reliability.conditions;

import org.jspecify.annotations.NullMarked;
