package io.github.tieredretry.testsupport;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.test.context.TestContextAnnotationUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Gives the application of a Spring test class whose static {@link TestQueues} field
 * declares {@link TestQueues#settings settings} the properties of
 * {@link TestQueues#applicationProperties()}: its queue names, {@code test.id}, its
 * parking lot and those settings, so that no class repeats a
 * {@code @DynamicPropertySource} method for them. Registered in
 * {@code META-INF/spring.factories} of the test jar, which other modules' tests use too:
 * a class whose {@code TestQueues} declares no settings is left alone.
 * <p>
 * The properties take precedence over every other property source, as those of a
 * {@code @DynamicPropertySource} did, except a {@code @DynamicPropertySource}'s, which
 * remains for what is known only at run time (a proxy's port, say). They never name the
 * broker's connection ({@code spring.rabbitmq.host}, {@code port}, ...): those come from
 * system properties in the broker matrix, or from {@link RabbitTestBroker}, and would be
 * hidden.
 */
public class TestQueuesContextCustomizerFactory implements ContextCustomizerFactory {

	/**
	 * The source of {@code @DynamicPropertySource} values in the Spring test framework.
	 */
	static final String DYNAMIC_PROPERTIES = "Dynamic Test Properties";

	@Override
	public @Nullable ContextCustomizer createContextCustomizer(Class<?> testClass,
			List<ContextConfigurationAttributes> configAttributes) {
		TestQueues queues = queuesOf(testClass);
		return (queues != null && queues.declaresSettings()) ? new Customizer(queues.applicationProperties()) : null;
	}

	private static @Nullable TestQueues queuesOf(Class<?> testClass) {
		for (Class<?> type = testClass; type != null && type != Object.class; type = type.getSuperclass()) {
			for (Field field : type.getDeclaredFields()) {
				if (Modifier.isStatic(field.getModifiers()) && field.getType() == TestQueues.class) {
					ReflectionUtils.makeAccessible(field);
					return (TestQueues) ReflectionUtils.getField(field, null);
				}
			}
		}
		return TestContextAnnotationUtils.searchEnclosingClass(testClass) ? queuesOf(testClass.getEnclosingClass())
				: null;
	}

	/**
	 * Adds the properties; equal for equal properties, as the key of the context cache.
	 *
	 * @param properties the application's properties
	 */
	record Customizer(Map<String, Object> properties) implements ContextCustomizer {

		@Override
		public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration config) {
			MutablePropertySources sources = context.getEnvironment().getPropertySources();
			MapPropertySource source = new MapPropertySource("testQueues", this.properties);
			if (sources.contains(DYNAMIC_PROPERTIES)) {
				sources.addAfter(DYNAMIC_PROPERTIES, source);
			}
			else {
				sources.addFirst(source);
			}
		}

	}

}
