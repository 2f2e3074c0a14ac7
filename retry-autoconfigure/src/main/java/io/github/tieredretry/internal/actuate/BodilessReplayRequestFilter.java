package io.github.tieredretry.internal.actuate;

import java.io.IOException;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.function.Supplier;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Lets {@code curl -X POST .../actuator/retry/parking-lot/replay} start a replay:
 * Actuator write operations consume JSON, and a {@code POST} without body and without
 * {@code Content-Type} would be refused with a bare {@code 415}. Such a request (and only
 * such a request to the replay path) is given {@code Content-Type: application/json}: an
 * empty body, which the endpoint reads as "no parameters".
 */
public class BodilessReplayRequestFilter extends OncePerRequestFilter {

	private final Supplier<@Nullable String> endpointPath;

	/**
	 * Create the filter.
	 * @param endpointPath the path of the {@code retry} endpoint, e.g.
	 * {@code /actuator/retry}, or {@code null} when it is not served over the web
	 */
	public BodilessReplayRequestFilter(Supplier<@Nullable String> endpointPath) {
		this.endpointPath = endpointPath;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		chain.doFilter(isBodilessReplay(request) ? new JsonContentType(request) : request, response);
	}

	private boolean isBodilessReplay(HttpServletRequest request) {
		if (!"POST".equals(request.getMethod()) || request.getContentType() != null
				|| request.getContentLengthLong() > 0 || request.getHeader(HttpHeaders.TRANSFER_ENCODING) != null) {
			return false;
		}
		String path = this.endpointPath.get();
		String replayPath = (path != null) ? path + "/" + RetryEndpoint.PARKING_LOT + "/" + RetryEndpoint.REPLAY : null;
		String requestPath = request.getRequestURI().substring(request.getContextPath().length());
		return replayPath != null && (requestPath.equals(replayPath) || requestPath.equals(replayPath + "/"));
	}

	private static final class JsonContentType extends HttpServletRequestWrapper {

		JsonContentType(HttpServletRequest request) {
			super(request);
		}

		@Override
		public String getContentType() {
			return MediaType.APPLICATION_JSON_VALUE;
		}

		@Override
		public @Nullable String getHeader(String name) {
			return HttpHeaders.CONTENT_TYPE.equalsIgnoreCase(name) ? getContentType() : super.getHeader(name);
		}

		@Override
		public Enumeration<String> getHeaders(String name) {
			return HttpHeaders.CONTENT_TYPE.equalsIgnoreCase(name) ? Collections.enumeration(List.of(getContentType()))
					: super.getHeaders(name);
		}

		@Override
		public Enumeration<String> getHeaderNames() {
			List<String> names = Collections.list(super.getHeaderNames());
			names.add(HttpHeaders.CONTENT_TYPE);
			return Collections.enumeration(names);
		}

	}

}
