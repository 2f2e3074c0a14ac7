package io.github.tieredretry.internal.console;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import io.github.tieredretry.event.MessageParkedEvent;
import io.github.tieredretry.event.MessageReplayedEvent;
import io.github.tieredretry.event.RetryScheduledEvent;
import io.github.tieredretry.policy.ParkedReason;
import io.github.tieredretry.testsupport.MutableClock;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RetryTrends}: hourly counts per queue over the last 24 hours.
 */
class RetryTrendsTests {

	private static final Instant START = Instant.parse("2026-11-28T09:15:00Z");

	private final MutableClock clock = new MutableClock(START);

	private final RetryTrends trends = new RetryTrends(this.clock);

	@Test
	void countsEachKindInTheHourItHappenedPerQueueWithTheTotal() {
		retried("orders");
		retried("orders");
		parked("orders");
		this.clock.advance(Duration.ofMinutes(50));
		replayed("orders");
		parked("payments");

		RetryTrends.Trends snapshot = this.trends.snapshot(Map.of("orders", "OrderListener#onOrder")::get);

		assertThat(snapshot.hours()).hasSize(24)
			.startsWith(Instant.parse("2026-11-27T11:00:00Z"))
			.endsWith(Instant.parse("2026-11-28T10:00:00Z"));
		RetryTrends.Series orders = snapshot.series().get(1);
		assertThat(orders.queue()).isEqualTo("orders");
		assertThat(orders.listener()).isEqualTo("OrderListener#onOrder");
		assertThat(orders.retried()).isEqualTo(hours(22, 2));
		assertThat(orders.parked()).isEqualTo(hours(22, 1));
		assertThat(orders.replayed()).isEqualTo(hours(23, 1));
		RetryTrends.Series payments = snapshot.series().get(0);
		assertThat(payments.listener()).as("no listener consumes it").isNull();
		assertThat(payments.parked()).isEqualTo(hours(23, 1));
		assertThat(snapshot.total().queue()).isNull();
		assertThat(snapshot.total().parked().get(22)).isOne();
		assertThat(snapshot.total().parked().get(23)).isOne();
		assertThat(snapshot.total().retried().get(22)).isEqualTo(2);
	}

	@Test
	void anHourOlderThanADayIsNoLongerCountedAndItsSlotStartsAgainFromZero() {
		parked("orders");
		this.clock.advance(Duration.ofHours(23));
		parked("orders");
		assertThat(series("orders").parked()).isEqualTo(sum(hours(0, 1), hours(23, 1)));

		this.clock.advance(Duration.ofHours(1));
		assertThat(series("orders").parked()).as("the first hour fell out").isEqualTo(hours(22, 1));

		parked("orders");
		assertThat(series("orders").parked()).as("the slot reused for the new hour")
			.isEqualTo(sum(hours(22, 1), hours(23, 1)));
	}

	@Test
	void seriesAreSortedByListenerThenQueueAndNothingIsShownBeforeAnything() {
		assertThat(this.trends.snapshot((queue) -> null).series()).isEmpty();
		assertThat(this.trends.snapshot((queue) -> null).total().parked()).containsOnly(0L);
		parked("b");
		parked("a");
		parked("c");
		assertThat(this.trends.snapshot(Map.of("c", "A#on")::get).series()).extracting(RetryTrends.Series::queue)
			.containsExactly("a", "b", "c");
	}

	private RetryTrends.Series series(String queue) {
		return this.trends.snapshot((name) -> null)
			.series()
			.stream()
			.filter((series) -> queue.equals(series.queue()))
			.findFirst()
			.orElseThrow();
	}

	private void retried(String queue) {
		this.trends.onRetryScheduled(new RetryScheduledEvent(queue, 1, "1s", Duration.ofSeconds(1),
				this.clock.instant().plusSeconds(1), "java.lang.IllegalStateException", "id"));
	}

	private void parked(String queue) {
		this.trends.onMessageParked(
				new MessageParkedEvent(queue, 3, ParkedReason.EXHAUSTED, "java.lang.IllegalStateException", "id"));
	}

	private void replayed(String queue) {
		this.trends.onMessageReplayed(new MessageReplayedEvent(queue, 1, "id"));
	}

	// 24 hourly counts, all 0 but one.
	private static List<Long> hours(int hour, long count) {
		List<Long> counts = new ArrayList<>(Collections.nCopies(24, 0L));
		counts.set(hour, count);
		return counts;
	}

	private static List<Long> sum(List<Long> first, List<Long> second) {
		List<Long> counts = new ArrayList<>(first);
		for (int hour = 0; hour < counts.size(); hour++) {
			counts.set(hour, counts.get(hour) + second.get(hour));
		}
		return counts;
	}

}
