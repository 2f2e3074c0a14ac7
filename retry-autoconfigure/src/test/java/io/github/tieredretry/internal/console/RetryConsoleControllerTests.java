package io.github.tieredretry.internal.console;

import java.time.Instant;
import java.util.NoSuchElementException;

import io.github.tieredretry.parkinglot.ParkingLotService;
import org.junit.jupiter.api.Test;

import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.ResultActions;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;

import static org.mockito.BDDMockito.given;
import static org.mockito.BDDMockito.willThrow;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verifyNoInteractions;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Tests for the breaker action of {@link RetryConsoleController}: a listener is paused or
 * resumed through its breaker, and a request the overview refuses gets its reason. No
 * broker.
 */
class RetryConsoleControllerTests {

	private final RetryOverview overview = mock(RetryOverview.class);

	private final ParkingLotService parkingLot = mock(ParkingLotService.class);

	private final MockMvc mvc = MockMvcBuilders.standaloneSetup(new RetryConsoleController(this.overview,
			this.parkingLot, new OperatorActions(this.parkingLot, this.overview, (event) -> {
			})))
		.addPlaceholderValue("retry.console.path", "/retry-console")
		.build();

	@Test
	void pausingAListenerForcesItsBreakerOpenAndAnswersItsState() throws Exception {
		given(this.overview.changeBreaker("OrderListener#onOrder", "open")).willReturn(new RetryOverview.Breaker(
				"forced-open", Instant.parse("2026-11-24T03:00:00Z"), null, null, 80, 20, 20, "10s", 2));

		postBreaker("{\"listener\":\"OrderListener#onOrder\",\"state\":\"open\"}").andExpect(status().isOk())
			.andExpect(jsonPath("$.state").value("forced-open"));
	}

	@Test
	void listenerWithoutABreakerIsNotFoundWithTheReason() throws Exception {
		willThrow(new NoSuchElementException("No listener with a circuit breaker is named or consumes 'x'"))
			.given(this.overview)
			.changeBreaker("x", "open");

		postBreaker("{\"listener\":\"x\",\"state\":\"open\"}").andExpect(status().isNotFound())
			.andExpect(jsonPath("$.message").value("No listener with a circuit breaker is named or consumes 'x'"));
	}

	@Test
	void otherStatesAndAMissingListenerAreBadRequestsWithTheReason() throws Exception {
		willThrow(new IllegalArgumentException("state must be 'open' or 'closed'")).given(this.overview)
			.changeBreaker("OrderListener#onOrder", "half-open");

		postBreaker("{\"listener\":\"OrderListener#onOrder\",\"state\":\"half-open\"}")
			.andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.message").value("state must be 'open' or 'closed'"));
		postBreaker("{}").andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.message").value("listener is required"));
	}

	@Test
	void withoutABodyNothingIsChanged() throws Exception {
		this.mvc.perform(post("/retry-console/api/breaker")).andExpect(status().isBadRequest());
		verifyNoInteractions(this.overview);
	}

	/**
	 * Posts a breaker change with the given JSON body to the console's API.
	 */
	private ResultActions postBreaker(String json) throws Exception {
		return this.mvc
			.perform(post("/retry-console/api/breaker").contentType(MediaType.APPLICATION_JSON).content(json));
	}

}
