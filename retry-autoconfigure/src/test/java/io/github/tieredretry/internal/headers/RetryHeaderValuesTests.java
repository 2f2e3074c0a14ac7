package io.github.tieredretry.internal.headers;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.util.Date;
import java.util.Map;

import com.rabbitmq.client.impl.LongStringHelper;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.policy.RetryState;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RetryHeaderValues}.
 */
class RetryHeaderValuesTests {

	private static final long EPOCH_MILLIS = 1_748_779_200_000L;

	@Test
	void integralNumbersOfAnyTypeAreCounts() {
		assertThat(RetryHeaderValues.count(3L)).isEqualTo(3);
		assertThat(RetryHeaderValues.count(3)).isEqualTo(3);
		assertThat(RetryHeaderValues.count((short) 3)).isEqualTo(3);
		assertThat(RetryHeaderValues.count((byte) 3)).isEqualTo(3);
		assertThat(RetryHeaderValues.count(3.0)).isEqualTo(3);
		assertThat(RetryHeaderValues.count(new BigDecimal("3"))).isEqualTo(3);
	}

	@Test
	void decimalTextIsACount() {
		assertThat(RetryHeaderValues.count("3")).isEqualTo(3);
		assertThat(RetryHeaderValues.count(" 3 ")).isEqualTo(3);
		assertThat(RetryHeaderValues.count(LongStringHelper.asLongString("4"))).isEqualTo(4);
	}

	@Test
	void zeroIsACount() {
		assertThat(RetryHeaderValues.count(0L)).isZero();
	}

	@Test
	void absentCountIsZero() {
		assertThat(RetryHeaderValues.count(null)).isZero();
	}

	@Test
	void textThatIsNotANumberCountsAsZero() {
		assertThat(RetryHeaderValues.count("abc")).isZero();
		assertThat(RetryHeaderValues.count("")).isZero();
		assertThat(RetryHeaderValues.count("2.5")).isZero();
		assertThat(RetryHeaderValues.count(true)).isZero();
		assertThat(RetryHeaderValues.count(new Date())).isZero();
		assertThat(RetryHeaderValues.count(new byte[] { 1, 2 })).isZero();
	}

	@Test
	void negativeCountsCountAsZero() {
		assertThat(RetryHeaderValues.count(-5)).isZero();
		assertThat(RetryHeaderValues.count(-5L)).isZero();
		assertThat(RetryHeaderValues.count("-5")).isZero();
		assertThat(RetryHeaderValues.count(Long.MIN_VALUE)).isZero();
	}

	@Test
	void fractionalAndNonFiniteNumbersCountAsZero() {
		assertThat(RetryHeaderValues.count(2.5)).isZero();
		assertThat(RetryHeaderValues.count(2.5f)).isZero();
		assertThat(RetryHeaderValues.count(Double.NaN)).isZero();
		assertThat(RetryHeaderValues.count(Double.POSITIVE_INFINITY)).isZero();
		assertThat(RetryHeaderValues.count(new BigDecimal("2.5"))).isZero();
	}

	@Test
	void hugeCountsStayHuge() {
		assertThat(RetryHeaderValues.count(Long.MAX_VALUE)).isEqualTo(Long.MAX_VALUE);
		assertThat(RetryHeaderValues.count(1e30)).isEqualTo(Long.MAX_VALUE);
		// 2^64 + 3 must not wrap around to 3.
		BigInteger twoToThe64Plus3 = BigInteger.TWO.pow(64).add(BigInteger.valueOf(3));
		assertThat(RetryHeaderValues.count(twoToThe64Plus3)).isEqualTo(Long.MAX_VALUE);
		assertThat(RetryHeaderValues.count(new BigDecimal(twoToThe64Plus3))).isEqualTo(Long.MAX_VALUE);
		assertThat(RetryHeaderValues.count(new BigDecimal("1e30"))).isEqualTo(Long.MAX_VALUE);
	}

	@Test
	void hugeCountTextThatDoesNotFitALongCountsAsZero() {
		assertThat(RetryHeaderValues.count("99999999999999999999")).isZero();
	}

	@Test
	void epochMillisAreReadFromNumbersAndText() {
		Instant expected = Instant.ofEpochMilli(EPOCH_MILLIS);
		assertThat(RetryHeaderValues.epochMillis(EPOCH_MILLIS)).isEqualTo(expected);
		assertThat(RetryHeaderValues.epochMillis(Long.toString(EPOCH_MILLIS))).isEqualTo(expected);
		assertThat(RetryHeaderValues.epochMillis((double) EPOCH_MILLIS)).isEqualTo(expected);
		assertThat(RetryHeaderValues.epochMillis(LongStringHelper.asLongString(Long.toString(EPOCH_MILLIS))))
			.isEqualTo(expected);
		assertThat(RetryHeaderValues.epochMillis(0)).isEqualTo(Instant.EPOCH);
	}

	@Test
	void unusableEpochMillisAreAbsent() {
		assertThat(RetryHeaderValues.epochMillis(null)).isNull();
		assertThat(RetryHeaderValues.epochMillis(-1L)).isNull();
		assertThat(RetryHeaderValues.epochMillis("abc")).isNull();
		assertThat(RetryHeaderValues.epochMillis("2025-06-01T12:00:00Z")).isNull();
		assertThat(RetryHeaderValues.epochMillis(1.5)).isNull();
		assertThat(RetryHeaderValues.epochMillis(new Date(EPOCH_MILLIS))).isNull();
	}

	@Test
	void hugeEpochMillisAreReadAsFarFuture() {
		assertThat(RetryHeaderValues.epochMillis(Long.MAX_VALUE)).isEqualTo(Instant.ofEpochMilli(Long.MAX_VALUE));
	}

	@Test
	void stateIsReadFromTheHeadersWrittenForTheConsumingQueue() {
		assertThat(RetryHeaderValues.readState(writtenFor("orders"), 2L, "orders")).isEqualTo(
				new RetryState(2, Instant.ofEpochMilli(EPOCH_MILLIS), Instant.ofEpochMilli(EPOCH_MILLIS + 10_000)));
	}

	@Test
	void retryQueueMayArriveAsLongString() {
		Map<String, Object> headers = Map.of(RetryHeaders.QUEUE, LongStringHelper.asLongString("orders"));
		assertThat(RetryHeaderValues.readState(headers, 1, "orders").retries()).isEqualTo(1);
	}

	@Test
	void headersWrittenForAnotherQueueMeanAFirstDelivery() {
		assertThat(RetryHeaderValues.readState(writtenFor("invoices"), 4L, "orders"))
			.isSameAs(RetryState.FIRST_DELIVERY);
	}

	@Test
	void missingRetryQueueMeansAFirstDeliveryWhateverTheCount() {
		assertThat(RetryHeaderValues.readState(Map.of(RetryHeaders.DUE, EPOCH_MILLIS), 4L, "orders"))
			.isSameAs(RetryState.FIRST_DELIVERY);
		assertThat(RetryHeaderValues.readState(Map.of(), null, "orders")).isSameAs(RetryState.FIRST_DELIVERY);
	}

	@Test
	void garbageValuesForTheConsumingQueueGiveAZeroCountAndNoTimes() {
		Map<String, Object> headers = Map.of(RetryHeaders.QUEUE, "orders", RetryHeaders.FIRST_FAILURE, "yesterday",
				RetryHeaders.DUE, -42);
		assertThat(RetryHeaderValues.readState(headers, "abc", "orders")).isEqualTo(new RetryState(0, null, null));
	}

	/**
	 * The headers of a retry written for the given queue: its first failure and its due
	 * time, 10 s later.
	 */
	private static Map<String, Object> writtenFor(String queue) {
		return Map.of(RetryHeaders.QUEUE, queue, RetryHeaders.FIRST_FAILURE, EPOCH_MILLIS, RetryHeaders.DUE,
				EPOCH_MILLIS + 10_000);
	}

}
