package io.github.tieredretry.internal.console;

import java.io.IOException;
import java.net.CookieManager;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An HTTP client for the console and the endpoint of an application on a local port,
 * keeping cookies as a browser does, for the tests that put them behind Spring Security.
 */
final class ConsoleClient {

	private static final Pattern META = Pattern
		.compile("<meta name=\"(csrf-header|csrf-token)\" content=\"([^\"]*)\">");

	private final HttpClient http = HttpClient.newBuilder().cookieHandler(new CookieManager()).build();

	private final int port;

	ConsoleClient(int port) {
		this.port = port;
	}

	/**
	 * The value of an {@code Authorization} header that logs in with HTTP basic.
	 * @param user the user
	 * @param password the password
	 * @return the header's value
	 */
	static String basic(String user, String password) {
		return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
	}

	HttpRequest.Builder request(String path) {
		return HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.timeout(Duration.ofSeconds(30));
	}

	HttpResponse<String> send(HttpRequest.Builder request) {
		try {
			return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * A {@code GET} with a login.
	 * @param path the path
	 * @param authorization the {@code Authorization} header's value
	 * @return the response
	 */
	HttpResponse<String> get(String path, String authorization) {
		return send(request(path).header("Authorization", authorization).GET());
	}

	/**
	 * A {@code POST} of JSON with a login, as the console's script sends it: with the
	 * page's CSRF token, when given.
	 * @param path the path
	 * @param authorization the {@code Authorization} header's value
	 * @param csrf the page's CSRF token, or {@code null} for none
	 * @param json the body
	 * @return the response
	 */
	HttpResponse<String> postJson(String path, String authorization, @Nullable Csrf csrf, String json) {
		HttpRequest.Builder request = request(path).header("Authorization", authorization)
			.header("Content-Type", "application/json");
		if (csrf != null) {
			request.header(csrf.header(), csrf.token());
		}
		return send(request.POST(HttpRequest.BodyPublishers.ofString(json)));
	}

	/**
	 * The CSRF header and token a console page carries, as its script reads them.
	 * @param page the page's HTML
	 * @return the header's name and the token
	 */
	static Csrf csrf(String page) {
		Matcher meta = META.matcher(page);
		assertThat(meta.find()).as("the page's csrf-header").isTrue();
		String header = meta.group(2);
		assertThat(meta.find()).as("the page's csrf-token").isTrue();
		return new Csrf(header, meta.group(2));
	}

	/**
	 * A CSRF token and the header it is sent in.
	 *
	 * @param header the header's name
	 * @param token the token
	 */
	record Csrf(String header, String token) {
	}

}
