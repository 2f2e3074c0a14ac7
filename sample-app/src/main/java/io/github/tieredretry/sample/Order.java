package io.github.tieredretry.sample;

import java.math.BigDecimal;

/**
 * An order to be paid.
 *
 * @param orderId the order's id
 * @param customer who ordered
 * @param amount how much to charge
 */
public record Order(String orderId, String customer, BigDecimal amount) {
}
