package io.github.tieredretry.autoconfigure;

import java.beans.PropertyDescriptor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeanUtils;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.ResolvableType;
import org.springframework.core.env.Environment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * Checks the {@code retry.*} keys as written, which binding alone cannot: a key that
 * {@link RetryProperties} does not have fails startup naming the closest known key (a
 * misspelt key would otherwise be ignored), and a duration written without a unit fails
 * startup with the fix (Spring Boot would read it as milliseconds, where {@code 10} more
 * often means seconds), as {@code @RetryableListener(delays = "10")} does.
 * <p>
 * The known keys come from {@link RetryProperties} itself, so they cannot drift from it.
 * The names of {@code retry.policies} entries are the user's own. Environment variables
 * are checked for units, but not for unknown keys: the environment holds variables of
 * other programs, such as a {@code RETRY_COUNT}.
 */
final class RetryPropertyNames {

	private static final ConfigurationPropertyName ROOT = ConfigurationPropertyName.of("retry");

	private static final Pattern NUMBER_WITHOUT_UNIT = Pattern.compile("[-+]?\\d+");

	private static final Pattern PLAIN_ELEMENT = Pattern.compile("[a-zA-Z0-9-]+");

	private static final Pattern ZERO = Pattern.compile("[-+]?0+");

	private static final Node ROOT_NODE = Node.of(ResolvableType.forClass(RetryProperties.class));

	private RetryPropertyNames() {
	}

	/**
	 * Check every {@code retry.*} key of the environment.
	 * @param environment the environment
	 * @throws UnknownRetryPropertyException for a key that {@link RetryProperties} does
	 * not have
	 * @throws InvalidConfigurationPropertyValueException for a duration without a unit
	 */
	static void check(Environment environment) {
		Set<ConfigurationPropertyName> seen = new HashSet<>();
		for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
			if (!(source instanceof IterableConfigurationPropertySource iterable)) {
				continue;
			}
			boolean environmentVariables = source.getUnderlyingSource() instanceof SystemEnvironmentPropertySource;
			iterable.filter(ROOT::isAncestorOf).stream().forEach((name) -> {
				if (seen.add(name)) {
					check(name, source.getConfigurationProperty(name), environmentVariables);
				}
			});
		}
	}

	private static void check(ConfigurationPropertyName name, @Nullable ConfigurationProperty property,
			boolean environmentVariable) {
		Node node = ROOT_NODE;
		for (int i = 1; i < name.getNumberOfElements(); i++) {
			Node next = node.child(name, i);
			if (next == null) {
				if (!environmentVariable) {
					throw new UnknownRetryPropertyException(asWritten(name, name.getNumberOfElements(), -1, null),
							(property != null && property.getOrigin() != null) ? property.getOrigin().toString() : null,
							closestKnownKey(name, i, node));
				}
				return;
			}
			node = next;
		}
		if (node.isDuration() && property != null) {
			checkUnit(name, property.getValue());
		}
	}

	private static void checkUnit(ConfigurationPropertyName name, @Nullable Object value) {
		if (value == null) {
			return;
		}
		String text = value.toString();
		for (String part : text.split(",")) {
			String trimmed = part.trim();
			if (NUMBER_WITHOUT_UNIT.matcher(trimmed).matches() && !ZERO.matcher(trimmed).matches()) {
				String property = withoutIndex(name);
				throw new InvalidConfigurationPropertyValueException(property, text,
						"'" + trimmed + "' has no unit, so it is ambiguous (Spring Boot would read it as "
								+ "milliseconds). Write '" + trimmed + "ms' for milliseconds or '" + trimmed
								+ "s' for seconds, and give every duration its unit, for example " + example(property)
								+ ".");
			}
		}
	}

	private static String example(String property) {
		boolean list = property.endsWith(".delays") || property.equals("retry.tiers");
		return property + (list ? "=2s, 4s, 8s" : "=10s");
	}

	private static String withoutIndex(ConfigurationPropertyName name) {
		ConfigurationPropertyName property = name;
		while (property.isLastElementIndexed() && property.getNumberOfElements() > 1
				&& property.isNumericIndex(property.getNumberOfElements() - 1)) {
			property = property.getParent();
		}
		return property.toString();
	}

	// The known key closest to the key as written: a key deeper down that ends with what
	// was written from the unknown element on (retry.backend for retry.defaults.backend),
	// else the key as written with the unknown element replaced by the closest sibling.
	private static String closestKnownKey(ConfigurationPropertyName name, int unknown, Node node) {
		String nested = nestedKnownKey(name, unknown, node);
		if (nested != null) {
			return nested;
		}
		String written = name.getElement(unknown, Form.DASHED);
		String closest = null;
		int best = Integer.MAX_VALUE;
		for (String candidate : node.children().keySet()) {
			int distance = distance(written, candidate);
			if (distance < best) {
				best = distance;
				closest = candidate;
			}
		}
		return asWritten(name, (closest != null) ? name.getNumberOfElements() : unknown, unknown, closest);
	}

	// A key written a level (or more) too high, such as retry.backend: the shortest key
	// below the unknown element's parent that ends with the elements written from the
	// unknown one on. Not searched under maps: their keys are the user's names.
	private static @Nullable String nestedKnownKey(ConfigurationPropertyName name, int unknown, Node node) {
		List<String> written = new ArrayList<>();
		int end = unknown;
		while (end < name.getNumberOfElements() && !name.isNumericIndex(end)) {
			written.add(name.getElement(end, Form.UNIFORM));
			end++;
		}
		List<String> closest = null;
		for (List<String> path : node.paths()) {
			if (path.size() > written.size() && (closest == null || path.size() < closest.size())
					&& endsWith(path, written)) {
				closest = path;
			}
		}
		if (closest == null) {
			return null;
		}
		StringBuilder key = new StringBuilder(asWritten(name, unknown, -1, null));
		closest.forEach((element) -> key.append('.').append(element));
		for (int i = end; i < name.getNumberOfElements(); i++) {
			key.append('[').append(name.getElement(i, Form.ORIGINAL)).append(']');
		}
		return key.toString();
	}

	private static boolean endsWith(List<String> path, List<String> uniformElements) {
		int offset = path.size() - uniformElements.size();
		for (int i = 0; i < uniformElements.size(); i++) {
			if (!path.get(offset + i).replace("-", "").equals(uniformElements.get(i))) {
				return false;
			}
		}
		return true;
	}

	private static String asWritten(ConfigurationPropertyName name, int end, int replaced,
			@Nullable String replacement) {
		StringBuilder key = new StringBuilder(name.getElement(0, Form.ORIGINAL));
		for (int i = 1; i < end; i++) {
			String element = (i == replaced && replacement != null) ? replacement : name.getElement(i, Form.ORIGINAL);
			boolean bracketed = name.isNumericIndex(i) || !PLAIN_ELEMENT.matcher(element).matches();
			key.append(bracketed ? "[" + element + "]" : "." + element);
		}
		return key.toString();
	}

	// Levenshtein distance.
	private static int distance(String a, String b) {
		int[] previous = new int[b.length() + 1];
		int[] current = new int[b.length() + 1];
		for (int j = 0; j <= b.length(); j++) {
			previous[j] = j;
		}
		for (int i = 1; i <= a.length(); i++) {
			current[0] = i;
			for (int j = 1; j <= b.length(); j++) {
				int substitution = previous[j - 1] + ((a.charAt(i - 1) == b.charAt(j - 1)) ? 0 : 1);
				current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
			}
			int[] swap = previous;
			previous = current;
			current = swap;
		}
		return previous[b.length()];
	}

	/**
	 * What may follow a key: the properties of a nested class, any name (the keys of a
	 * map), an index (a list), or nothing.
	 */
	private record Node(Map<String, Node> children, @Nullable Node mapValue, @Nullable Node listElement,
			boolean isDuration) {

		static Node of(ResolvableType type) {
			Class<?> resolved = type.toClass();
			if (Map.class.isAssignableFrom(resolved)) {
				return new Node(Map.of(), of(type.asMap().getGeneric(1)), null, false);
			}
			if (Collection.class.isAssignableFrom(resolved)) {
				Node element = of(type.asCollection().getGeneric(0));
				return new Node(Map.of(), null, element, element.isDuration());
			}
			if (resolved.getPackageName().equals(RetryProperties.class.getPackageName())) {
				Map<String, Node> children = new LinkedHashMap<>();
				for (PropertyDescriptor descriptor : BeanUtils.getPropertyDescriptors(resolved)) {
					if (descriptor.getReadMethod() != null && !"class".equals(descriptor.getName())) {
						children.put(DataObjectPropertyName.toDashedForm(descriptor.getName()),
								of(ResolvableType.forMethodReturnType(descriptor.getReadMethod())));
					}
				}
				return new Node(children, null, null, false);
			}
			return new Node(Map.of(), null, null, Duration.class.equals(resolved));
		}

		/**
		 * The keys below this node, not into maps or lists.
		 * @return each key as a path of dashed elements
		 */
		List<List<String>> paths() {
			List<List<String>> paths = new ArrayList<>();
			this.children.forEach((element, child) -> {
				paths.add(List.of(element));
				for (List<String> below : child.paths()) {
					List<String> path = new ArrayList<>();
					path.add(element);
					path.addAll(below);
					paths.add(path);
				}
			});
			return paths;
		}

		@Nullable Node child(ConfigurationPropertyName name, int index) {
			if (this.mapValue != null) {
				return this.mapValue;
			}
			if (this.listElement != null) {
				return name.isNumericIndex(index) ? this.listElement : null;
			}
			String element = name.getElement(index, Form.UNIFORM);
			for (Map.Entry<String, Node> child : this.children.entrySet()) {
				if (child.getKey().replace("-", "").equals(element)) {
					return child.getValue();
				}
			}
			return null;
		}

	}

}
