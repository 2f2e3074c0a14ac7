package io.github.tieredretry.internal.console;

import java.net.http.HttpResponse;

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
	static final TestQueues queues = TestQueues.prefixed("console-security")
		.settings((settings) -> settings.classicTiers("1013ms").set("retry.console.enabled", "true"));

	static final String PARKING_LOT = queues.parkingLotName();

	static final String ORDERS = queues.name("orders");

	@LocalServerPort
	int port;

	@Test
	void theConsoleNeedsALoginAndItsChangesTheCsrfTokenOfThePage() {
		Messages.publish(queues.broker(), "", PARKING_LOT, "parked by hand");

		ConsoleClient client = new ConsoleClient(this.port);
		assertThat(client.send(client.request("/retry-console/").GET()).statusCode()).as("to the login").isIn(302, 401);
		HttpResponse<String> page = client.get("/retry-console/", OPS);
		assertThat(page.statusCode()).isEqualTo(200);
		ConsoleClient.Csrf csrf = ConsoleClient.csrf(page.body());
		assertThat(csrf.header()).isEqualTo("X-CSRF-TOKEN");
		assertThat(csrf.token()).isNotBlank();

		String dryRun = "{\"all\": true, \"dryRun\": true}";
		assertThat(client.postJson("/retry-console/api/purge", OPS, null, dryRun).statusCode())
			.as("without the CSRF token")
			.isEqualTo(403);
		HttpResponse<String> purge = client.postJson("/retry-console/api/purge", OPS, csrf, dryRun);
		assertThat(purge.statusCode()).as(purge.body()).isEqualTo(200);
		assertThat(JsonPath.parse(purge.body()).read("$.matched", Integer.class)).isEqualTo(1);
		assertThat(queues.broker().count(PARKING_LOT)).isEqualTo(1);
	}

	static final String OPS = ConsoleClient.basic("operator", "secret");

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
