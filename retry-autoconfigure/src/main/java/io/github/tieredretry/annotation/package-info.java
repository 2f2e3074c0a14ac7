/**
 * The {@code @RetryableListener} annotation that opts a {@code @RabbitListener} into
 * tiered retries.
 */
@NullMarked
package io.github.tieredretry.annotation;

import org.jspecify.annotations.NullMarked;
