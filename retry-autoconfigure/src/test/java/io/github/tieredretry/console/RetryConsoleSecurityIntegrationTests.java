package io.github.tieredretry.console;

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

import com.jayway.jsonpath.JsonPath;
import io.github.tieredretry.testsupport.Messages;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configuration.EnableWebSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.security.config.Customizer.withDefaults;

/**
 * The operations console behind Spring Security, as docs/observability.md shows it: a
 * login is needed, and a change (a {@code POST}) passes CSRF protection only with the
 * token the page carries, sent the way the page's script sends it.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@RabbitIntegrationTest
class RetryConsoleSecurityIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("console-security");

	static final String PARKING_LOT = queues.name("parking");

	static final String ORDERS = queues.name("orders");

	static final Pattern META = Pattern.compile("<meta name=\"(csrf-header|csrf-token)\" content=\"([^\"]*)\">");

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add("retry.parking-lot", () -> PARKING_LOT);
		registry.add("retry.queue-type", () -> "classic");
		registry.add("retry.tiers", () -> "1013ms");
		registry.add("retry.console.enabled", () -> "true");
	}

	@LocalServerPort
	int port;

	final HttpClient http = HttpClient.newBuilder().cookieHandler(new CookieManager()).build();

	@Test
	void theConsoleNeedsALoginAndItsChangesTheCsrfTokenOfThePage() {
		Messages.publish(queues.broker(), "", PARKING_LOT, "parked by hand");

		assertThat(send(request("/retry-console/").GET()).statusCode()).as("to the login").isIn(302, 401);
		HttpResponse<String> page = send(request("/retry-console/").header("Authorization", OPS).GET());
		assertThat(page.statusCode()).isEqualTo(200);
		Matcher meta = META.matcher(page.body());
		assertThat(meta.find()).isTrue();
		String header = meta.group(2);
		assertThat(meta.find()).isTrue();
		String token = meta.group(2);
		assertThat(header).isEqualTo("X-CSRF-TOKEN");
		assertThat(token).isNotBlank();

		String dryRun = "{\"all\": true, \"dryRun\": true}";
		assertThat(send(request("/retry-console/api/purge").header("Authorization", OPS)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(dryRun))).statusCode()).as("without the CSRF token")
			.isEqualTo(403);
		HttpResponse<String> purge = send(request("/retry-console/api/purge").header("Authorization", OPS)
			.header("Content-Type", "application/json")
			.header(header, token)
			.POST(HttpRequest.BodyPublishers.ofString(dryRun)));
		assertThat(purge.statusCode()).as(purge.body()).isEqualTo(200);
		assertThat(JsonPath.parse(purge.body()).read("$.matched", Integer.class)).isEqualTo(1);
		assertThat(queues.broker().count(PARKING_LOT)).isEqualTo(1);
	}

	static final String OPS = "Basic "
			+ Base64.getEncoder().encodeToString("operator:secret".getBytes(StandardCharsets.UTF_8));

	private HttpRequest.Builder request(String path) {
		return HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.timeout(Duration.ofSeconds(30));
	}

	private HttpResponse<String> send(HttpRequest.Builder request) {
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

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@EnableWebSecurity
	static class App {

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			// As in docs/observability.md.
			http.authorizeHttpRequests(
					(requests) -> requests.requestMatchers("/retry-console/**").hasRole("OPS").anyRequest().permitAll())
				.formLogin(withDefaults())
				.httpBasic(withDefaults());
			return http.build();
		}

		@Bean
		InMemoryUserDetailsManager users() {
			return new InMemoryUserDetailsManager(
					User.withUsername("operator").password("{noop}secret").roles("OPS").build());
		}

	}

}
