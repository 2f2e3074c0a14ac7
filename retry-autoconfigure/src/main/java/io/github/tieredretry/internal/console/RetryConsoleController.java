package io.github.tieredretry.internal.console;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.Map;
import java.util.NoSuchElementException;

import io.github.tieredretry.parkinglot.FailureGroups;
import io.github.tieredretry.parkinglot.ParkingLotRequest;
import io.github.tieredretry.parkinglot.ParkingLotRequestException;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.parkinglot.PeekResult;
import io.github.tieredretry.parkinglot.PurgeResult;
import io.github.tieredretry.parkinglot.ReplayInProgressException;
import io.github.tieredretry.parkinglot.ReplayStatus;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeanWrapperImpl;
import org.springframework.core.io.ClassPathResource;
import org.springframework.http.CacheControl;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseBody;
import org.springframework.web.util.HtmlUtils;

/**
 * Serves the operations console at {@code retry.console.path}: the page (plain HTML, CSS
 * and JavaScript from this jar) and the JSON API it calls. Reads are {@code GET}s, every
 * change is a {@code POST}, so that Spring Security's CSRF protection applies; the page
 * carries the CSRF token when there is one. Parameters are those of
 * {@link ParkingLotRequest}.
 */
@Controller
@RequestMapping("${retry.console.path:/retry-console}")
public class RetryConsoleController {

	private static final String RESOURCES = "io/github/tieredretry/internal/console/static/";

	/** How operator actions taken here are told apart in their audit events. */
	private static final String VIA = "console";

	/** Spring Security's request attribute for the CSRF token. */
	private static final String CSRF_ATTRIBUTE = "_csrf";

	private final RetryOverview overview;

	private final ParkingLotService parkingLot;

	private final OperatorActions actions;

	/**
	 * Create the controller.
	 * @param overview describes the retry set-up
	 * @param parkingLot works on the parking lot
	 * @param actions replays, purges, pauses and resumes, recorded with their author
	 */
	public RetryConsoleController(RetryOverview overview, ParkingLotService parkingLot, OperatorActions actions) {
		this.overview = overview;
		this.parkingLot = parkingLot;
		this.actions = actions;
	}

	@GetMapping
	ResponseEntity<Void> redirectToPage(HttpServletRequest request) {
		return ResponseEntity.status(HttpStatus.FOUND).header("Location", request.getRequestURI() + "/").build();
	}

	@GetMapping(path = "/", produces = MediaType.TEXT_HTML_VALUE)
	@ResponseBody
	ResponseEntity<String> page(HttpServletRequest request) throws IOException {
		String header = "";
		String token = "";
		Object csrf = request.getAttribute(CSRF_ATTRIBUTE);
		if (csrf != null) {
			// Spring Security's CsrfToken, read without depending on Spring Security.
			BeanWrapperImpl properties = new BeanWrapperImpl(csrf);
			header = String.valueOf(properties.getPropertyValue("headerName"));
			token = String.valueOf(properties.getPropertyValue("token"));
		}
		String page = resource("index.html").replace("__CSRF_HEADER__", HtmlUtils.htmlEscape(header))
			.replace("__CSRF_TOKEN__", HtmlUtils.htmlEscape(token));
		return ResponseEntity.ok().cacheControl(CacheControl.noStore()).contentType(MediaType.TEXT_HTML).body(page);
	}

	@GetMapping(path = "/console.js", produces = "text/javascript")
	@ResponseBody
	String script() throws IOException {
		return resource("console.js");
	}

	@GetMapping(path = "/console.css", produces = "text/css")
	@ResponseBody
	String styles() throws IOException {
		return resource("console.css");
	}

	@GetMapping("/api/overview")
	@ResponseBody
	RetryOverview.Description overview() {
		return this.overview.describe();
	}

	@GetMapping("/api/trends")
	@ResponseBody
	RetryTrends.Trends trends() {
		return this.overview.trends();
	}

	@GetMapping("/api/groups")
	@ResponseBody
	FailureGroups groups(@RequestParam Map<String, String> parameters) {
		return this.parkingLot.groups(ParkingLotRequest.of(parameters));
	}

	@GetMapping("/api/messages")
	@ResponseBody
	PeekResult messages(@RequestParam Map<String, String> parameters) {
		return this.parkingLot.peek(ParkingLotRequest.of(parameters));
	}

	@GetMapping("/api/replay")
	@ResponseBody
	ResponseEntity<ReplayStatus> replayStatus() {
		return statusOrNoContent(this.parkingLot.replayStatus());
	}

	@PostMapping("/api/replay")
	@ResponseBody
	ResponseEntity<Object> replay(@RequestBody(required = false) @Nullable Map<String, Object> parameters,
			@Nullable Principal principal) {
		ParkingLotRequest request = ParkingLotRequest.of((parameters != null) ? parameters : Map.of());
		Object result = this.actions.replay(principal, VIA, request);
		return request.dryRun() ? ResponseEntity.ok(result) : ResponseEntity.accepted().body(result);
	}

	@PostMapping("/api/replay/stop")
	@ResponseBody
	ResponseEntity<ReplayStatus> stopReplay(@Nullable Principal principal) {
		return statusOrNoContent(this.actions.stopReplay(principal, VIA));
	}

	@PostMapping("/api/purge")
	@ResponseBody
	PurgeResult purge(@RequestBody(required = false) @Nullable Map<String, Object> parameters,
			@Nullable Principal principal) {
		return this.actions.purge(principal, VIA, ParkingLotRequest.of((parameters != null) ? parameters : Map.of()));
	}

	/**
	 * Pause a listener (its breaker forced open until resumed) or resume it.
	 * @param parameters {@code listener} (its name or a queue it consumes) and
	 * {@code state} ({@code open} or {@code closed})
	 * @param principal who asks
	 * @return the breaker as it is now; 404 for a listener without a breaker, 400 for
	 * another state, each with the reason
	 */
	@PostMapping("/api/breaker")
	@ResponseBody
	ResponseEntity<Object> changeBreaker(@RequestBody(required = false) @Nullable Map<String, Object> parameters,
			@Nullable Principal principal) {
		Object listener = (parameters != null) ? parameters.get("listener") : null;
		Object state = (parameters != null) ? parameters.get("state") : null;
		if (listener == null) {
			return ResponseEntity.badRequest().body(Map.of("message", "listener is required"));
		}
		try {
			return ResponseEntity.ok(this.actions.changeBreaker(principal, VIA, listener.toString(),
					(state != null) ? state.toString() : null));
		}
		catch (NoSuchElementException ex) {
			return ResponseEntity.status(HttpStatus.NOT_FOUND).body(Map.of("message", String.valueOf(ex.getMessage())));
		}
		catch (IllegalArgumentException ex) {
			return ResponseEntity.badRequest().body(Map.of("message", String.valueOf(ex.getMessage())));
		}
	}

	@ExceptionHandler(ParkingLotRequestException.class)
	@ResponseBody
	ResponseEntity<Map<String, String>> badRequest(ParkingLotRequestException ex) {
		return ResponseEntity.badRequest().body(Map.of("message", String.valueOf(ex.getMessage())));
	}

	@ExceptionHandler(ReplayInProgressException.class)
	@ResponseBody
	ResponseEntity<Map<String, String>> conflict(ReplayInProgressException ex) {
		return ResponseEntity.status(HttpStatus.CONFLICT).body(Map.of("message", String.valueOf(ex.getMessage())));
	}

	private static ResponseEntity<ReplayStatus> statusOrNoContent(@Nullable ReplayStatus status) {
		// 204 until a replay was started: there is nothing to show yet.
		return (status != null) ? ResponseEntity.ok(status) : ResponseEntity.noContent().build();
	}

	private static String resource(String name) throws IOException {
		try (InputStream in = new ClassPathResource(RESOURCES + name, RetryConsoleController.class.getClassLoader())
			.getInputStream()) {
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
	}

}
