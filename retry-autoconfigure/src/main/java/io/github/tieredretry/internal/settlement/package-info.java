/**
 * Internal: forwarding a failed delivery and settling it: confirmed forwards with a pause
 * per target, messages held while the broker blocks publishers, acks over AMQP 0-9-1 and
 * settlement over AMQP 1.0, and the events of each outcome.
 */
@NullMarked
package io.github.tieredretry.internal.settlement;

import org.jspecify.annotations.NullMarked;
