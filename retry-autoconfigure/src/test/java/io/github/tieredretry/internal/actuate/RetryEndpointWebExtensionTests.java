package io.github.tieredretry.internal.actuate;

import java.security.Principal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.github.tieredretry.internal.console.OperatorActions;
import io.github.tieredretry.internal.console.RetryOverview;
import io.github.tieredretry.parkinglot.ParkedMessageFilter;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.parkinglot.PurgeResult;
import io.github.tieredretry.parkinglot.ReplayInProgressException;
import io.github.tieredretry.parkinglot.ReplayPreview;
import io.github.tieredretry.parkinglot.ReplayStatus;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.audit.listener.AuditApplicationEvent;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.isNull;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.mock;

/**
 * Tests for {@link RetryEndpointWebExtension}, without a broker: which status and which
 * reason each kind of request gets.
 */
class RetryEndpointWebExtensionTests {

	final ParkingLotService parkingLot = mock(ParkingLotService.class);

	final List<Object> events = new ArrayList<>();

	final RetryOverview overview = mock(RetryOverview.class);

	final RetryEndpointWebExtension extension = new RetryEndpointWebExtension(new RetryEndpoint(this.overview,
			this.parkingLot, new OperatorActions(this.parkingLot, this.overview, this.events::add)));

	@Test
	void aPathThatNamesNothingIsNotFoundForEveryMethod() {
		assertError(read("parking-lot", "elsewhere"), 404,
				"No resource 'parking-lot/elsewhere' below the retry endpoint");
		assertError(this.extension.replay(new String[] { "parking-lot", "requeue" }, null, null, null, null, null, null,
				null, null, null, null, null, SecurityContext.NONE), 404, "No resource 'parking-lot/requeue'");
		assertError(this.extension.delete(new String[] { "elsewhere" }, null, null, null, null, null, null, null, null,
				null, null, SecurityContext.NONE), 404, "No resource 'elsewhere'");
	}

	@Test
	void theReplayIsNotFoundBeforeOneWasStarted() {
		assertError(read("parking-lot", "replay"), 404, "No replay has been started");
	}

	@Test
	void invalidParametersAreBadRequestsWithTheReason() {
		assertError(this.extension.parkingLot(new String[] { "parking-lot" }, "lots", null, null, null, null, null,
				null, null, null), 400, "limit must be a whole number but was 'lots'");
		assertError(this.extension.parkingLot(new String[] { "parking-lot" }, null, null, null, null, null, "tired",
				null, null, null), 400, "reason must be one of exhausted, not-retryable, timeout, unroutable");
		assertError(this.extension.delete(new String[] { "parking-lot" }, null, "maybe", null, null, null, null, null,
				null, null, null, SecurityContext.NONE), 400, "dryRun must be true or false but was 'maybe'");
	}

	@Test
	void aStartedReplayIsAcceptedAndADryRunIsOk() {
		given(this.parkingLot.startReplay(any(), isNull(), any())).willReturn(status(ReplayStatus.RUNNING));
		given(this.parkingLot.previewReplay(any(), isNull(), anyInt()))
			.willReturn(new ReplayPreview(2, 0, Map.of(), 5, false));

		WebEndpointResponse<Object> started = replay(null);
		WebEndpointResponse<Object> dryRun = replay("true");

		assertThat(started.getStatus()).isEqualTo(202);
		assertThat(started.getBody()).isInstanceOf(ReplayStatus.class);
		assertThat(dryRun.getStatus()).isEqualTo(200);
		assertThat(dryRun.getBody()).isInstanceOf(ReplayPreview.class);
	}

	@Test
	void aReplayWhileAnotherRunsIsAConflict() {
		given(this.parkingLot.startReplay(any(), isNull(), any()))
			.willThrow(new ReplayInProgressException("A replay is running"));

		assertError(replay(null), 409, "A replay is running");
		assertThat(this.events).as("a refused action changes nothing and is not audited").isEmpty();
	}

	@Test
	void theStatusOfARunningReplayIsOk() {
		given(this.parkingLot.replayStatus()).willReturn(status(ReplayStatus.RUNNING));
		given(this.parkingLot.stopReplay()).willReturn(status(ReplayStatus.RUNNING));

		assertThat(read("parking-lot", "replay").getStatus()).isEqualTo(200);
		assertThat(this.extension
			.delete(new String[] { "parking-lot", "replay" }, null, null, null, null, null, null, null, null, null,
					null, SecurityContext.NONE)
			.getStatus()).isEqualTo(200);
	}

	@Test
	void everyActionIsAuditedWithThePrincipalOfItsRequest() {
		given(this.parkingLot.parkingLot()).willReturn("retry.parking-lot");
		given(this.parkingLot.purgeAsRequested(any()))
			.willReturn(new PurgeResult("retry.parking-lot", false, 3, 3, 3, false));
		SecurityContext alice = securityContext("alice");

		this.extension.delete(new String[] { "parking-lot" }, null, null, null, "orders", null, null, null, null, null,
				null, alice);

		assertThat(this.events).singleElement().isInstanceOfSatisfying(AuditApplicationEvent.class, (event) -> {
			assertThat(event.getAuditEvent().getPrincipal()).isEqualTo("alice");
			assertThat(event.getAuditEvent().getType()).isEqualTo(OperatorActions.PURGE);
			assertThat(event.getAuditEvent().getData()).containsEntry("via", "endpoint")
				.containsEntry("filter", "queue='orders'")
				.containsEntry("dryRun", false)
				.containsEntry("purged", 3L);
		});
	}

	private static SecurityContext securityContext(String name) {
		return new SecurityContext() {

			@Override
			public Principal getPrincipal() {
				return () -> name;
			}

			@Override
			public boolean isUserInRole(String role) {
				return false;
			}

		};
	}

	private WebEndpointResponse<Object> read(String... path) {
		return this.extension.parkingLot(path, null, null, null, null, null, null, null, null, null);
	}

	private WebEndpointResponse<Object> replay(String dryRun) {
		return this.extension.replay(new String[] { "parking-lot", "replay" }, null, null, dryRun, null, null, null,
				null, null, null, null, null, SecurityContext.NONE);
	}

	private static ReplayStatus status(String state) {
		return new ReplayStatus("r1", state, ParkedMessageFilter.ALL, null, 50, Instant.EPOCH, null, 0, 0, Map.of(),
				List.of(), 0, null);
	}

	@SuppressWarnings("unchecked")
	private static void assertError(WebEndpointResponse<Object> response, int status, String message) {
		assertThat(response.getStatus()).isEqualTo(status);
		assertThat((Map<String, Object>) response.getBody()).containsEntry("status", status)
			.hasEntrySatisfying("message", (text) -> assertThat(text).asString().contains(message));
	}

}
