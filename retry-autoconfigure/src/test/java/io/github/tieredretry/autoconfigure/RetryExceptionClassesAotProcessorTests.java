package io.github.tieredretry.autoconfigure;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.TypeReference;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.aot.BeanFactoryInitializationAotContribution;
import org.springframework.beans.factory.aot.BeanFactoryInitializationAotProcessor;
import org.springframework.beans.factory.aot.BeanFactoryInitializationCode;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.context.properties.bind.BindableRuntimeHintsRegistrar;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.javapoet.ClassName;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;

/**
 * What an application processed ahead of time needs for its {@code retry.*} properties in
 * a native image: the exception classes its policies name (loaded by name at startup),
 * and the binding of the nested policy map, which Spring Boot's own processing of
 * {@code @ConfigurationProperties} beans registers.
 */
class RetryExceptionClassesAotProcessorTests {

	@Test
	void exceptionClassesNamedByTheDefaultsAndEveryPolicyAreRegisteredForReflection() {
		MockEnvironment environment = new MockEnvironment()
			.withProperty("retry.defaults.no-retry-on", "java.lang.IllegalArgumentException")
			.withProperty("retry.policies.payments.retry-on",
					"java.io.IOException, com.example.PaymentGateway$PaymentTimeoutException")
			.withProperty("retry.policies.payments.no-retry-on[0]", "java.lang.SecurityException");

		RuntimeHints hints = hintsFor(environment);

		for (String name : List.of("java.lang.IllegalArgumentException", "java.io.IOException",
				"com.example.PaymentGateway$PaymentTimeoutException", "java.lang.SecurityException")) {
			assertThat(RuntimeHintsPredicates.reflection().onType(TypeReference.of(name))).as(name).accepts(hints);
		}
		assertThat(hints.reflection().typeHints()).hasSize(4);
	}

	@Test
	void noContributionWhenNoPolicyNamesAnExceptionClass() {
		DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();
		beanFactory.registerSingleton(ConfigurableApplicationContext.ENVIRONMENT_BEAN_NAME,
				new MockEnvironment().withProperty("retry.defaults.max-retries", "3"));
		assertThat(new RetryExceptionClassesAotProcessor().processAheadOfTime(beanFactory)).isNull();
	}

	@Test
	void isRegisteredAsAnAotProcessor() {
		assertThat(SpringFactoriesLoader.forResourceLocation("META-INF/spring/aot.factories")
			.load(BeanFactoryInitializationAotProcessor.class))
			.hasAtLeastOneElementOfType(RetryExceptionClassesAotProcessor.class);
	}

	@Test
	void nestedPolicyMapIsBoundThroughSpringBootsBindingHints() throws NoSuchMethodException {
		RuntimeHints hints = new RuntimeHints();
		BindableRuntimeHintsRegistrar.forTypes(RetryProperties.class).registerHints(hints);
		assertThat(RuntimeHintsPredicates.reflection()
			.onMethodInvocation(RetryPolicyProperties.class.getMethod("setNoRetryOn", List.class))).accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection()
			.onMethodInvocation(RetryPolicyProperties.Breaker.class.getMethod("setEnabled", Boolean.class)))
			.accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection()
			.onMethodInvocation(RetryProperties.Console.class.getMethod("setPath", String.class))).accepts(hints);
	}

	private static RuntimeHints hintsFor(MockEnvironment environment) {
		DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();
		beanFactory.registerSingleton(ConfigurableApplicationContext.ENVIRONMENT_BEAN_NAME, environment);
		BeanFactoryInitializationAotContribution contribution = new RetryExceptionClassesAotProcessor()
			.processAheadOfTime(beanFactory);
		assertThat(contribution).isNotNull();
		DefaultGenerationContext generationContext = new DefaultGenerationContext(
				new ClassNameGenerator(ClassName.get("com.example", "Application")), new InMemoryGeneratedFiles());
		contribution.applyTo(generationContext, mock(BeanFactoryInitializationCode.class));
		return generationContext.getRuntimeHints();
	}

}
