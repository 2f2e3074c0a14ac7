/**
 * Test support for applications with tiered retries: short test tiers and awaiting what
 * happened to a message.
 */
@NullMarked
package io.github.tieredretry.test;

import org.jspecify.annotations.NullMarked;
