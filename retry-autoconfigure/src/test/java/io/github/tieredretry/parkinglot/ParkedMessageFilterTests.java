package io.github.tieredretry.parkinglot;

import java.time.Instant;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link ParkedMessageFilter}.
 */
class ParkedMessageFilterTests {

	static final Instant PARKED_AT = Instant.parse("2026-11-22T06:07:18Z");

	final ParkedMessage message = new ParkedMessage("order-1", "orders", 3, "exhausted",
			"io.example.PaymentGateway$PaymentTimeoutException", "timed out", PARKED_AT, PARKED_AT, 0, "text/plain", 5,
			"hello", "0123456789ab", null, Map.of());

	@Test
	void theEmptyFilterMatchesEveryMessage() {
		assertThat(ParkedMessageFilter.ALL.matchesAll()).isTrue();
		assertThat(ParkedMessageFilter.parse(" ", "", null, null, null, null, null).matchesAll()).isTrue();
		assertThat(ParkedMessageFilter.ALL.matches(this.message)).isTrue();
	}

	@Test
	void everyCriterionThatIsSetMustMatch() {
		assertThat(filter("orders", "0123456789ab", "PaymentTimeoutException", "exhausted", "order-1")
			.matches(this.message)).isTrue();
		assertThat(filter("payments", null, null, null, null).matches(this.message)).isFalse();
		assertThat(filter(null, "ba9876543210", null, null, null).matches(this.message)).isFalse();
		assertThat(filter(null, null, "TimeoutException", null, null).matches(this.message)).as("a whole simple name")
			.isFalse();
		assertThat(filter(null, null, "io.example.PaymentGateway$PaymentTimeoutException", null, null)
			.matches(this.message)).isTrue();
		assertThat(filter(null, null, null, "timeout", null).matches(this.message)).isFalse();
		assertThat(filter(null, null, null, null, "order-2").matches(this.message)).isFalse();
	}

	@Test
	void parkedTimesAreAHalfOpenRange() {
		assertThat(times("2026-11-22T06:07:18Z", null).matches(this.message)).isTrue();
		assertThat(times(null, "2026-11-22T06:07:18Z").matches(this.message)).isFalse();
		assertThat(times("2026-11-22T06:00:00Z", "2026-11-22T07:00:00Z").matches(this.message)).isTrue();
	}

	@Test
	void invalidCriteriaAreRefusedWithTheReason() {
		assertThatExceptionOfType(ParkingLotRequestException.class)
			.isThrownBy(() -> filter(null, null, null, "tired", null))
			.withMessage("reason must be one of exhausted, not-retryable, timeout, unroutable but was 'tired'");
		assertThatExceptionOfType(ParkingLotRequestException.class).isThrownBy(() -> times("yesterday", null))
			.withMessageContaining("parkedAfter must be an ISO-8601 instant");
		assertThatExceptionOfType(ParkingLotRequestException.class)
			.isThrownBy(() -> times("2026-11-22T07:00:00Z", "2026-11-22T06:00:00Z"))
			.withMessageContaining("must be earlier than parkedBefore");
	}

	private static ParkedMessageFilter filter(String queue, String group, String exception, String reason,
			String messageId) {
		return ParkedMessageFilter.parse(queue, group, exception, reason, null, null, messageId);
	}

	private static ParkedMessageFilter times(String after, String before) {
		return ParkedMessageFilter.parse(null, null, null, null, after, before, null);
	}

}
