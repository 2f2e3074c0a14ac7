package io.github.tieredretry.listener;

import io.github.tieredretry.annotation.Backend;
import io.github.tieredretry.internal.install.RetryBackends;
import io.github.tieredretry.testsupport.TestBroker;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which backend a test's listener runs on: the broker where the test broker has delayed
 * retry (RabbitMQ 4.3 or later), the tiers before.
 */
final class BrokerBackendAssertions {

	private BrokerBackendAssertions() {
	}

	/**
	 * Assert that a listener runs on the broker backend where the test broker can hold
	 * its retries, and on the tiers elsewhere.
	 * @param backends the application's backends
	 * @param method the listener's method name
	 */
	static void runsOnTheBrokerWhereItCan(RetryBackends backends, String method) {
		ListenerBackend backend = backends.backends()
			.stream()
			.filter((candidate) -> candidate.listener().endsWith("#" + method))
			.findFirst()
			.orElseThrow();
		assertThat(backend.choice()).isNotNull();
		assertThat(backend.choice().backend()).as(backend.choice().reason())
			.isEqualTo(TestBroker.get().isAtLeast(4, 3) ? Backend.BROKER : Backend.TIERS);
	}

}
