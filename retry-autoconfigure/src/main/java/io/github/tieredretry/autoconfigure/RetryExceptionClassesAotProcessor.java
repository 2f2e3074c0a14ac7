package io.github.tieredretry.autoconfigure;

import java.util.Collection;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.TypeReference;
import org.springframework.beans.factory.aot.BeanFactoryInitializationAotContribution;
import org.springframework.beans.factory.aot.BeanFactoryInitializationAotProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.Environment;

/**
 * Registers a reflection hint for every exception class that the application's
 * {@code retry.defaults} and {@code retry.policies.<name>} name in {@code retry-on} and
 * {@code no-retry-on}, as the build's environment holds them: the starter loads those
 * classes by name at startup ({@code Class.forName}), which a native image allows only
 * for registered types. Names that only the deployment's environment sets are not known
 * at build time and need a hint of the application's own.
 */
class RetryExceptionClassesAotProcessor implements BeanFactoryInitializationAotProcessor {

	@Override
	public @Nullable BeanFactoryInitializationAotContribution processAheadOfTime(
			ConfigurableListableBeanFactory beanFactory) {
		if (!beanFactory.containsBean(ConfigurableApplicationContext.ENVIRONMENT_BEAN_NAME)) {
			return null;
		}
		Environment environment = beanFactory.getBean(ConfigurableApplicationContext.ENVIRONMENT_BEAN_NAME,
				Environment.class);
		Set<String> names = exceptionClassNames(
				Binder.get(environment).bind("retry", RetryProperties.class).orElseGet(RetryProperties::new));
		if (names.isEmpty()) {
			return null;
		}
		return (generationContext, code) -> names
			.forEach((name) -> generationContext.getRuntimeHints().reflection().registerType(TypeReference.of(name)));
	}

	/**
	 * The class names in {@code retry-on} and {@code no-retry-on} of the defaults and of
	 * every named policy, sorted.
	 * @param properties the bound properties
	 * @return the names
	 */
	static Set<String> exceptionClassNames(RetryProperties properties) {
		Set<String> names = new TreeSet<>();
		Stream.concat(Stream.of(properties.getDefaults()), properties.getPolicies().values().stream())
			.flatMap((policy) -> Stream.of(policy.getRetryOn(), policy.getNoRetryOn()))
			.flatMap(Collection::stream)
			.map(String::strip)
			.filter((name) -> !name.isEmpty())
			.forEach(names::add);
		return names;
	}

}
