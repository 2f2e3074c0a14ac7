package io.github.tieredretry.internal.console;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;

import com.jayway.jsonpath.JsonPath;
import io.github.tieredretry.testsupport.Messages;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.actuate.audit.AuditEvent;
import org.springframework.boot.actuate.audit.AuditEventRepository;
import org.springframework.boot.actuate.audit.InMemoryAuditEventRepository;
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
 * Who did what: a purge from the console and one from the {@code retry} endpoint, each by
 * a user Spring Security knows, are audit events with that user's name, stored in the
 * application's {@code AuditEventRepository} and shown at {@code /actuator/auditevents}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@RabbitIntegrationTest
class OperatorAuditIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("operator-audit")
		.settings((settings) -> settings.classicTiers("1013ms")
			.set("retry.console.enabled", "true")
			.set("management.endpoints.web.exposure.include", "retry, auditevents"));

	static final String PARKING_LOT = queues.parkingLotName();

	static final String ALICE = ConsoleClient.basic("alice", "secret");

	static final String BOB = ConsoleClient.basic("bob", "secret");

	@LocalServerPort
	int port;

	@Autowired
	AuditEventRepository audit;

	@Test
	void purgesFromTheConsoleAndTheEndpointAreAuditedWithTheNameOfTheirUser() {
		Messages.publish(queues.broker(), "", PARKING_LOT, "parked by hand");
		Messages.publish(queues.broker(), "", PARKING_LOT, "parked by hand too");

		ConsoleClient client = new ConsoleClient(this.port);
		// Alice tries a purge in the console (a dry run: nothing is removed).
		ConsoleClient.Csrf csrf = ConsoleClient.csrf(client.get("/retry-console/", ALICE).body());
		HttpResponse<String> dryRun = client.postJson("/retry-console/api/purge", ALICE, csrf,
				"{\"all\": true, \"dryRun\": true}");
		assertThat(dryRun.statusCode()).as(dryRun.body()).isEqualTo(200);

		// Bob purges everything through the endpoint.
		HttpResponse<String> purge = client
			.send(client.request("/actuator/retry/parking-lot?all=true").header("Authorization", BOB).DELETE());
		assertThat(purge.statusCode()).as(purge.body()).isEqualTo(200);
		assertThat(JsonPath.parse(purge.body()).read("$.purged", Integer.class)).isEqualTo(2);

		List<AuditEvent> alices = this.audit.find("alice", null, OperatorActions.PURGE);
		assertThat(alices).singleElement()
			.satisfies((event) -> assertThat(event.getData()).containsEntry("via", "console")
				.containsEntry("dryRun", true)
				.containsEntry("matched", 2L)
				.containsEntry("purged", 0L)
				.containsEntry("filter", "all"));
		List<AuditEvent> bobs = this.audit.find("bob", null, OperatorActions.PURGE);
		assertThat(bobs).singleElement()
			.satisfies((event) -> assertThat(event.getData()).containsEntry("via", "endpoint")
				.containsEntry("dryRun", false)
				.containsEntry("purged", 2L));

		HttpResponse<String> auditEvents = client.get("/actuator/auditevents?type=" + OperatorActions.PURGE, BOB);
		assertThat(auditEvents.statusCode()).isEqualTo(200);
		List<Map<String, Object>> shown = JsonPath.read(auditEvents.body(), "$.events");
		assertThat(shown).extracting((event) -> event.get("principal")).containsExactly("alice", "bob");
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@EnableWebSecurity
	static class App {

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			http.authorizeHttpRequests((requests) -> requests.requestMatchers("/retry-console/**", "/actuator/**")
				.hasRole("OPS")
				.anyRequest()
				.permitAll())
				// The endpoint is an API for scripts: no CSRF token, a login on every
				// request.
				.csrf((csrf) -> csrf.ignoringRequestMatchers("/actuator/**"))
				.httpBasic(withDefaults());
			return http.build();
		}

		@Bean
		InMemoryUserDetailsManager users() {
			return new InMemoryUserDetailsManager(
					User.withUsername("alice").password("{noop}secret").roles("OPS").build(),
					User.withUsername("bob").password("{noop}secret").roles("OPS").build());
		}

		@Bean
		InMemoryAuditEventRepository auditEventRepository() {
			return new InMemoryAuditEventRepository();
		}

	}

}
