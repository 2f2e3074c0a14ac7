package io.github.tieredretry.actuate;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import io.github.tieredretry.console.RetryOverview;
import io.github.tieredretry.parkinglot.ParkedMessageFilter;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.parkinglot.ReplayInProgressException;
import io.github.tieredretry.parkinglot.ReplayPreview;
import io.github.tieredretry.parkinglot.ReplayStatus;
import org.junit.jupiter.api.Test;

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

	final RetryEndpointWebExtension extension = new RetryEndpointWebExtension(
			new RetryEndpoint(mock(RetryOverview.class), this.parkingLot));

	@Test
	void aPathThatNamesNothingIsNotFoundForEveryMethod() {
		assertError(read("parking-lot", "elsewhere"), 404,
				"No resource 'parking-lot/elsewhere' below the retry endpoint");
		assertError(this.extension.replay(new String[] { "parking-lot", "requeue" }, null, null, null, null, null, null,
				null, null, null, null, null), 404, "No resource 'parking-lot/requeue'");
		assertError(this.extension.delete(new String[] { "elsewhere" }, null, null, null, null, null, null, null, null,
				null, null), 404, "No resource 'elsewhere'");
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
				null, null, null), 400, "dryRun must be true or false but was 'maybe'");
	}

	@Test
	void aStartedReplayIsAcceptedAndADryRunIsOk() {
		given(this.parkingLot.startReplay(any(), isNull())).willReturn(status(ReplayStatus.RUNNING));
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
		given(this.parkingLot.startReplay(any(), isNull()))
			.willThrow(new ReplayInProgressException("A replay is running"));

		assertError(replay(null), 409, "A replay is running");
	}

	@Test
	void theStatusOfARunningReplayIsOk() {
		given(this.parkingLot.replayStatus()).willReturn(status(ReplayStatus.RUNNING));
		given(this.parkingLot.stopReplay()).willReturn(status(ReplayStatus.RUNNING));

		assertThat(read("parking-lot", "replay").getStatus()).isEqualTo(200);
		assertThat(this.extension
			.delete(new String[] { "parking-lot", "replay" }, null, null, null, null, null, null, null, null, null,
					null)
			.getStatus()).isEqualTo(200);
	}

	private WebEndpointResponse<Object> read(String... path) {
		return this.extension.parkingLot(path, null, null, null, null, null, null, null, null, null);
	}

	private WebEndpointResponse<Object> replay(String dryRun) {
		return this.extension.replay(new String[] { "parking-lot", "replay" }, null, null, dryRun, null, null, null,
				null, null, null, null, null);
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
