package io.github.tieredretry.internal.console;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import io.github.tieredretry.parkinglot.ParkedMessageFilter;
import io.github.tieredretry.parkinglot.ParkingLotRequest;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.parkinglot.ReplayPreview;
import io.github.tieredretry.parkinglot.ReplayStatus;
import org.junit.jupiter.api.Test;
import org.mockito.ArgumentCaptor;

import org.springframework.boot.actuate.audit.AuditEvent;
import org.springframework.boot.actuate.audit.listener.AuditApplicationEvent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;

/**
 * Tests for {@link OperatorActions}: each action is done, then recorded as an audit event
 * with its author, what it selected and what it touched.
 */
class OperatorActionsTests {

	final ParkingLotService parkingLot = mock(ParkingLotService.class);

	final RetryOverview overview = mock(RetryOverview.class);

	final List<Object> events = new ArrayList<>();

	final OperatorActions actions = new OperatorActions(this.parkingLot, this.overview, this.events::add);

	OperatorActionsTests() {
		given(this.parkingLot.parkingLot()).willReturn("retry.parking-lot");
	}

	@Test
	void aReplayIsAuditedWhenItStartsAndWhenItEndsWithWhatItMoved() {
		given(this.parkingLot.startReplay(any(), eq(10), any())).willReturn(status(ReplayStatus.RUNNING, 0));

		Object started = this.actions.replay(() -> "alice", "console",
				ParkingLotRequest.of(Map.of("queue", "orders", "limit", "10")));

		assertThat(started).isInstanceOf(ReplayStatus.class);
		AuditEvent start = onlyEvent();
		assertThat(start.getPrincipal()).isEqualTo("alice");
		assertThat(start.getType()).isEqualTo(OperatorActions.REPLAY);
		assertThat(start.getData()).containsEntry("via", "console")
			.containsEntry("parkingLot", "retry.parking-lot")
			.containsEntry("filter", "queue='orders'")
			.containsEntry("limit", 10)
			.containsEntry("dryRun", false)
			.containsEntry("replay", "r1");

		@SuppressWarnings("unchecked")
		ArgumentCaptor<Consumer<ReplayStatus>> whenEnded = ArgumentCaptor.forClass(Consumer.class);
		verify(this.parkingLot).startReplay(any(), eq(10), whenEnded.capture());
		this.events.clear();
		whenEnded.getValue().accept(status(ReplayStatus.FINISHED, 7));
		AuditEvent end = onlyEvent();
		assertThat(end.getPrincipal()).isEqualTo("alice");
		assertThat(end.getType()).isEqualTo(OperatorActions.REPLAY_ENDED);
		assertThat(end.getData()).containsEntry("replay", "r1")
			.containsEntry("state", ReplayStatus.FINISHED)
			.containsEntry("moved", 7);
	}

	@Test
	void aDryRunIsAuditedWithWhatItWouldMove() {
		given(this.parkingLot.previewReplay(any(), any(), anyInt()))
			.willReturn(new ReplayPreview(4, 1, Map.of(), 5, false));

		this.actions.replay(() -> "bob", "endpoint", ParkingLotRequest.of(Map.of("dryRun", "true")));

		AuditEvent dryRun = onlyEvent();
		assertThat(dryRun.getType()).isEqualTo(OperatorActions.REPLAY);
		assertThat(dryRun.getData()).containsEntry("dryRun", true)
			.containsEntry("filter", "all")
			.containsEntry("limit", "all")
			.containsEntry("wouldMove", 4)
			.containsEntry("wouldStay", 1);
	}

	@Test
	void stoppingAReplayIsAuditedAndNothingIsWhenNoReplayRan() {
		assertThat(this.actions.stopReplay(() -> "carol", "console")).isNull();
		assertThat(this.events).isEmpty();

		given(this.parkingLot.stopReplay()).willReturn(status(ReplayStatus.RUNNING, 2));
		this.actions.stopReplay(() -> "carol", "console");
		AuditEvent stop = onlyEvent();
		assertThat(stop.getType()).isEqualTo(OperatorActions.REPLAY_STOP);
		assertThat(stop.getData()).containsEntry("replay", "r1");
	}

	@Test
	void pausingAndResumingAListenerAreAuditedApart() {
		RetryOverview.Breaker breaker = new RetryOverview.Breaker("forced-open", Instant.EPOCH, null, null, 50, 20, 10,
				"30s", 3);
		given(this.overview.changeBreaker(any(), any())).willReturn(breaker);

		this.actions.changeBreaker(() -> "dave", "endpoint", "OrderListener#onOrder", "open");
		this.actions.changeBreaker(() -> "dave", "endpoint", "orders", "closed");

		assertThat(this.events).extracting((event) -> ((AuditApplicationEvent) event).getAuditEvent().getType())
			.containsExactly(OperatorActions.LISTENER_PAUSE, OperatorActions.LISTENER_RESUME);
		assertThat(((AuditApplicationEvent) this.events.get(1)).getAuditEvent().getData()).containsEntry("listener",
				"orders");
	}

	@Test
	void anActionWithoutAPrincipalIsAnonymous() {
		given(this.parkingLot.stopReplay()).willReturn(status(ReplayStatus.RUNNING, 0));

		this.actions.stopReplay(null, "endpoint");

		assertThat(onlyEvent().getPrincipal()).isEqualTo(OperatorActions.ANONYMOUS);
	}

	private AuditEvent onlyEvent() {
		assertThat(this.events).hasSize(1).first().isInstanceOf(AuditApplicationEvent.class);
		return ((AuditApplicationEvent) this.events.get(0)).getAuditEvent();
	}

	private static ReplayStatus status(String state, int moved) {
		return new ReplayStatus("r1", state, ParkedMessageFilter.ALL, 10, 50, Instant.EPOCH, null, moved, 0, Map.of(),
				List.of(), moved, null);
	}

}
