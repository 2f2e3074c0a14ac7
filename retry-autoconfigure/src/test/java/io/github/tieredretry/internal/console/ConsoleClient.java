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
