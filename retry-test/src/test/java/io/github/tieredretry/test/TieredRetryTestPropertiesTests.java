package io.github.tieredretry.test;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link TieredRetryTest} without a broker: the properties it sets and the bean it adds.
 */
@SpringBootTest(classes = TieredRetryTestPropertiesTests.NoApplication.class)
@TieredRetryTest
class TieredRetryTestPropertiesTests {

	@Autowired
	Environment environment;

	@Autowired
	ApplicationContext context;

	@Test
	void shortTiersAndExactDefaultDelaysAreSetAndRetryOutcomesIsABean() {
		Binder binder = Binder.get(this.environment);
		List<Duration> expected = List.of(Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500));
		assertThat(binder.bind("retry.tiers", Bindable.listOf(Duration.class)).get()).isEqualTo(expected);
		assertThat(binder.bind("retry.defaults.delays", Bindable.listOf(Duration.class)).get()).isEqualTo(expected);
		assertThat(binder.bind("retry.defaults.jitter", Double.class).get()).isZero();
		assertThat(this.context.getBeansOfType(RetryOutcomes.class)).hasSize(1);
	}

	@Configuration(proxyBeanMethods = false)
	static class NoApplication {

	}

}
