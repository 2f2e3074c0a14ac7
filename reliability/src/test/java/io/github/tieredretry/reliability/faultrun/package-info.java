/**
 * The fault runs: messages with scripted failures flow through the starter while nodes,
 * connections and application instances fail, and every message is accounted for.
 */
@NullMarked
package io.github.tieredretry.reliability.faultrun;

import org.jspecify.annotations.NullMarked;
