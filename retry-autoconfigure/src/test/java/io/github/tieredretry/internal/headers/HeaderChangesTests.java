package io.github.tieredretry.internal.headers;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.policy.FailureDecision;
import io.github.tieredretry.internal.policy.RetryDecider;
import io.github.tieredretry.internal.policy.RetryState;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.policy.EffectiveRetryPolicy;
import io.github.tieredretry.policy.ParkedReason;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.entry;

/**
 * Tests for {@link HeaderChanges}.
 */
class HeaderChangesTests {

	private static final Instant FIRST_FAILURE = Instant.parse("2025-06-01T12:00:00Z");

	private static final Instant NOW = FIRST_FAILURE.plusSeconds(30);

	private static final FailureDetails DETAILS = new FailureDetails("java.lang.IllegalStateException", "boom", null);

	@Test
	void retryWritesCountQueueTimesTierAndFailure() {
		FailureDecision.Retry retry = new FailureDecision.Retry(2, Duration.ofSeconds(12), Duration.ofSeconds(30),
				NOW.plusSeconds(12), FIRST_FAILURE);
		HeaderChanges changes = HeaderChanges.forRetry("orders", retry, DETAILS);
		assertThat(changes.set()).containsOnly(entry(RetryHeaders.COUNT, 2L), entry(RetryHeaders.QUEUE, "orders"),
				entry(RetryHeaders.FIRST_FAILURE, FIRST_FAILURE.toEpochMilli()),
				entry(RetryHeaders.DUE, NOW.plusSeconds(12).toEpochMilli()), entry(RetryHeaders.TIER, "30s"),
				entry(RetryHeaders.EXCEPTION, "java.lang.IllegalStateException"), entry(RetryHeaders.ERROR, "boom"));
		assertThat(changes.remove()).contains(RetryHeaders.PARKED_REASON, RetryHeaders.PARKED_AT);
	}

	@Test
	void aRetryReadBackFromItsHeadersIsNotInvokedBeforeTheDueTimeItWasScheduledFor() {
		// Header retry-due holds milliseconds. A due time of a finer grain was written
		// rounded down, so a retry that came back from its last hop within that
		// millisecond was invoked before the due time its RetryScheduledEvent gave
		// (RabbitMQ 4.0's CI leg: 0.3 ms before).
		RetryDecider decider = new RetryDecider(TierLadder.of(List.of(Duration.ofMillis(137))),
				new EffectiveRetryPolicy(3, List.of(Duration.ofMillis(600)), Duration.ofSeconds(1), 2.0,
						Duration.ofHours(1), 0, null, List.of(), List.of()),
				new SplittableRandom(1));
		FailureDecision.Retry retry = (FailureDecision.Retry) decider.afterFailure(RetryState.FIRST_DELIVERY, true,
				NOW.plusNanos(599_923_503));
		Map<String, Object> headers = HeaderChanges.forRetry("orders", retry, DETAILS).applyTo(Map.of());

		RetryState backFromTheTier = RetryHeaderValues.readState(headers, retry.retryNumber(), "orders");
		assertThat(decider.tierForEarlyArrival(backFromTheTier, retry.due().minusNanos(1))).isNotNull();
		assertThat(decider.tierForEarlyArrival(backFromTheTier, retry.due())).isNull();
	}

	@Test
	void retryCountIsWrittenAsALongSoSpringAmqpReadsIt() {
		FailureDecision.Retry retry = new FailureDecision.Retry(1, Duration.ofSeconds(1), Duration.ofSeconds(1),
				NOW.plusSeconds(1), FIRST_FAILURE);
		assertThat(HeaderChanges.forRetry("orders", retry, DETAILS).set().get(RetryHeaders.COUNT))
			.isInstanceOf(Long.class);
	}

	@Test
	void stackTraceIsWrittenOnlyWhenPresent() {
		FailureDecision.Retry retry = new FailureDecision.Retry(1, Duration.ofSeconds(1), Duration.ofSeconds(1),
				NOW.plusSeconds(1), FIRST_FAILURE);
		FailureDetails withStackTrace = new FailureDetails("java.lang.IllegalStateException", "boom", "trace");
		assertThat(HeaderChanges.forRetry("orders", retry, withStackTrace).set())
			.containsEntry(RetryHeaders.STACK_TRACE, "trace");
		assertThat(HeaderChanges.forRetry("orders", retry, DETAILS).set()).doesNotContainKey(RetryHeaders.STACK_TRACE);
	}

	@Test
	void stackTraceOfAnEarlierFailureIsDroppedWhenThisFailureHasNone() {
		Map<String, Object> received = new LinkedHashMap<>();
		received.put(RetryHeaders.EXCEPTION, "java.io.IOException");
		received.put(RetryHeaders.STACK_TRACE, "java.io.IOException: earlier\n\tat ...");
		FailureDecision.Retry retry = new FailureDecision.Retry(2, Duration.ofSeconds(1), Duration.ofSeconds(1),
				NOW.plusSeconds(1), FIRST_FAILURE);
		assertThat(HeaderChanges.forRetry("orders", retry, DETAILS).applyTo(received))
			.doesNotContainKey(RetryHeaders.STACK_TRACE);
		HeaderChanges park = HeaderChanges.forPark("orders", 2,
				new FailureDecision.Park(ParkedReason.EXHAUSTED, FIRST_FAILURE), DETAILS, NOW);
		assertThat(park.applyTo(received)).doesNotContainKey(RetryHeaders.STACK_TRACE);
	}

	@Test
	void stackTraceOfThisFailureReplacesThatOfAnEarlierOne() {
		Map<String, Object> received = new LinkedHashMap<>();
		received.put(RetryHeaders.STACK_TRACE, "earlier");
		FailureDecision.Retry retry = new FailureDecision.Retry(2, Duration.ofSeconds(1), Duration.ofSeconds(1),
				NOW.plusSeconds(1), FIRST_FAILURE);
		FailureDetails withStackTrace = new FailureDetails("java.lang.IllegalStateException", "boom", "this one");
		assertThat(HeaderChanges.forRetry("orders", retry, withStackTrace).applyTo(received))
			.containsEntry(RetryHeaders.STACK_TRACE, "this one");
	}

	@Test
	void appliedRetryKeepsForeignHeadersAndDropsParkingHeaders() {
		Map<String, Object> received = new LinkedHashMap<>();
		received.put("tenant", "acme");
		received.put(RetryHeaders.PARKED_REASON, "exhausted");
		received.put(RetryHeaders.PARKED_AT, 1L);
		received.put(RetryHeaders.COUNT, 7L);
		FailureDecision.Retry retry = new FailureDecision.Retry(1, Duration.ofSeconds(1), Duration.ofSeconds(1),
				NOW.plusSeconds(1), FIRST_FAILURE);
		Map<String, Object> applied = HeaderChanges.forRetry("orders", retry, DETAILS).applyTo(received);
		assertThat(applied).containsEntry("tenant", "acme")
			.containsEntry(RetryHeaders.COUNT, 1L)
			.doesNotContainKeys(RetryHeaders.PARKED_REASON, RetryHeaders.PARKED_AT);
	}

	@Test
	void applyingLeavesTheReceivedHeadersUntouched() {
		Map<String, Object> received = new HashMap<>(Map.of("tenant", "acme", RetryHeaders.TIER, "1s"));
		Map<String, Object> applied = HeaderChanges.forHop(Duration.ofMinutes(2)).applyTo(received);
		assertThat(applied).containsEntry(RetryHeaders.TIER, "2m");
		assertThat(received).containsEntry(RetryHeaders.TIER, "1s").hasSize(2);
	}

	@Test
	void applyingKeepsTheOrderOfTheReceivedHeaders() {
		Map<String, Object> received = new LinkedHashMap<>();
		received.put("z", 1);
		received.put("a", 2);
		received.put("m", 3);
		Map<String, Object> applied = HeaderChanges.forHop(Duration.ofSeconds(5)).applyTo(received);
		assertThat(applied.keySet()).containsExactly("z", "a", "m", RetryHeaders.TIER);
	}

	@Test
	void hopChangesOnlyTheTier() {
		Map<String, Object> received = Map.of(RetryHeaders.COUNT, 3L, RetryHeaders.QUEUE, "orders", RetryHeaders.DUE,
				123L, RetryHeaders.FIRST_FAILURE, 100L, RetryHeaders.EXCEPTION, "java.lang.IllegalStateException",
				RetryHeaders.ERROR, "boom", RetryHeaders.TIER, "1h");
		HeaderChanges hop = HeaderChanges.forHop(Duration.ofHours(1));
		assertThat(hop.set()).containsOnly(entry(RetryHeaders.TIER, "1h"));
		assertThat(hop.remove()).isEmpty();
		assertThat(hop.applyTo(received)).isEqualTo(received);
	}

	@Test
	void parkWritesReasonTimeCountAndFailureAndDropsSchedulingHeaders() {
		Map<String, Object> received = new LinkedHashMap<>();
		received.put("tenant", "acme");
		received.put(RetryHeaders.DUE, 123L);
		received.put(RetryHeaders.TIER, "5s");
		HeaderChanges park = HeaderChanges.forPark("orders", 3,
				new FailureDecision.Park(ParkedReason.EXHAUSTED, FIRST_FAILURE), DETAILS, NOW);
		assertThat(park.set()).containsOnly(entry(RetryHeaders.COUNT, 3L), entry(RetryHeaders.QUEUE, "orders"),
				entry(RetryHeaders.FIRST_FAILURE, FIRST_FAILURE.toEpochMilli()),
				entry(RetryHeaders.EXCEPTION, "java.lang.IllegalStateException"), entry(RetryHeaders.ERROR, "boom"),
				entry(RetryHeaders.PARKED_REASON, "exhausted"), entry(RetryHeaders.PARKED_AT, NOW.toEpochMilli()));
		assertThat(park.applyTo(received)).containsEntry("tenant", "acme")
			.doesNotContainKeys(RetryHeaders.DUE, RetryHeaders.TIER);
	}

	@Test
	void everyParkedReasonIsWrittenAsItsHeaderValue() {
		assertThat(Set.of(ParkedReason.values())).allSatisfy((reason) -> {
			HeaderChanges park = HeaderChanges.forPark("orders", 0, new FailureDecision.Park(reason, FIRST_FAILURE),
					DETAILS, NOW);
			assertThat(park.set()).containsEntry(RetryHeaders.PARKED_REASON, reason.value());
			assertThat(HeaderChanges.parkedReasonOf(park.set())).isEqualTo(reason);
		});
	}

	@Test
	void parkedMessageWithoutReasonWasRoutedThereByTheBrokerAsUnroutable() {
		assertThat(HeaderChanges.parkedReasonOf(Map.of())).isEqualTo(ParkedReason.UNROUTABLE);
		assertThat(HeaderChanges.parkedReasonOf(Map.of(RetryHeaders.PARKED_REASON, "timeout")))
			.isEqualTo(ParkedReason.TIMEOUT);
		assertThat(HeaderChanges.parkedReasonOf(Map.of(RetryHeaders.PARKED_REASON, "not-retryable")))
			.isEqualTo(ParkedReason.NOT_RETRYABLE);
	}

	@Test
	void changesCannotBeModifiedAfterCreation() {
		Map<String, Object> set = new HashMap<>(Map.of("a", 1));
		HeaderChanges changes = new HeaderChanges(set, Set.of());
		set.put("b", 2);
		assertThat(changes.set()).containsOnlyKeys("a");
		assertThatExceptionOfType(UnsupportedOperationException.class).isThrownBy(() -> changes.set().put("c", 3));
	}

}
