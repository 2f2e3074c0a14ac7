package io.github.tieredretry.docs;

import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.jayway.jsonpath.JsonPath;
import io.github.tieredretry.internal.topology.RetryTopology;
import org.junit.jupiter.api.Test;

import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every {@code retry.*} key that README.md, CONTRIBUTING.md and docs/ name exists in the
 * configuration metadata the build generates (spring-boot-configuration-processor's
 * {@code META-INF/spring-configuration-metadata.json}, which includes
 * {@code additional-spring-configuration-metadata.json}): in prose and tables, in code
 * spans and log lines, and in YAML and properties snippets (flattened to dotted keys). A
 * key under {@code retry.policies.<name>} exists when {@code retry.defaults} has it (the
 * metadata cannot list the keys of map values); {@code <name>}, {@code <ttl>} and
 * {@code *} stand for any element.
 * <p>
 * What is not a key: the names of the starter's exchanges, tier queues and parking lots
 * ({@link RetryTopology}), which share the {@code retry.} prefix, the value of an
 * assignment ({@code retry.parking-lot: retry.parking-lot.quorum}), and the misspelt keys
 * docs/configuration.md gives as examples of what startup refuses, which must stay
 * unknown.
 */
class DocumentationKeysTests {

	/** The examples of keys that fail startup (docs/configuration.md). */
	private static final Set<String> DOCUMENTED_AS_UNKNOWN = Set.of("retry.polices.doomed.max-retries",
			"retry.policies.doomed.max-retry");

	/**
	 * A {@code retry.} name that is not part of a longer name (a package such as
	 * {@code io.github.tieredretry.x}, a meter such as {@code rabbitmq.retry.depth}, a
	 * file such as {@code spring-retry.md}).
	 */
	private static final Pattern NAME = Pattern.compile("(?<![\\w.$/-])retry\\.[-\\w.<>*\\[\\]]*[-\\w<>*\\]]");

	/** A name assigned a value: the value is not scanned for keys. */
	private static final Pattern ASSIGNMENT = Pattern
		.compile("(?<![\\w.$/-])(retry\\.[-\\w.<>*\\[\\]]*[-\\w<>*\\]])(\\s*[:=]\\s*)([^\\s`,;)]+)");

	private static final Pattern INDEX = Pattern.compile("\\[([^\\]]*)\\]");

	private static final Pattern MAP_VALUE_TYPE = Pattern.compile("^java\\.util\\.Map<[^,]+,\\s*(.+)>$");

	private final Path documentation = Path.of(System.getProperty("snippets.documentation", "..")).normalize();

	@Test
	void everyRetryKeyTheDocumentationNamesExistsInTheConfigurationMetadata() throws IOException {
		Metadata metadata = Metadata.load();
		assertThat(metadata.properties).as("retry.* properties in the configuration metadata")
			.contains("retry.enabled", "retry.defaults.max-retries");

		Map<String, Set<String>> keys = new LinkedHashMap<>();
		for (Path file : MarkdownSnippets.documentationFiles(this.documentation)) {
			keysOf(file, keys);
		}
		assertThat(keys).as("retry.* keys found in README.md, CONTRIBUTING.md and docs/").hasSizeGreaterThan(40);

		List<String> unknown = new ArrayList<>();
		keys.forEach((key, locations) -> {
			if (DOCUMENTED_AS_UNKNOWN.contains(key)) {
				assertThat(metadata.exists(key))
					.as("%s, the documented example of an unknown key, (%s)", key, locations)
					.isFalse();
			}
			else if (!metadata.exists(key)) {
				unknown.add(key + " (" + String.join(", ", locations) + ")");
			}
		});
		assertThat(unknown)
			.as("retry.* keys that README.md, CONTRIBUTING.md and docs/ name and the configuration metadata "
					+ "does not have (known: %s)", new TreeSet<>(metadata.properties))
			.isEmpty();
		assertThat(keys).as("the documented examples of unknown keys")
			.containsKeys(DOCUMENTED_AS_UNKNOWN.toArray(String[]::new));
	}

	@Test
	void keysAreFoundInProseCodeSpansAndLogLinesButNotInOtherNamesThatStartWithRetry() {
		assertThat(namesIn("chosen per listener (`retry.backend`, per policy")).containsExactly("retry.backend");
		assertThat(namesIn("Retries of A#b run on the tiers: retry.backend is auto and the broker"))
			.containsExactly("retry.backend");
		assertThat(namesIn("set `retry.policies.<name>.jitter=0` and `retry.tiers[0]`."))
			.containsExactly("retry.policies.<name>.jitter", "retry.tiers[0]");
		assertThat(namesIn("another name (`retry.parking-lot: retry.parking-lot.quorum`)"))
			.containsExactly("retry.parking-lot");
		assertThat(namesIn(
				"exchange `retry.delay` routes to `retry.delay.10s`, then `retry.return` or " + "`retry.unroutable`"))
			.isEmpty();
		assertThat(namesIn("io.github.tieredretry.listener.BatchListenerFailedException, rabbitmq.retry.depth, "
				+ "spring.rabbitmq.listener.simple.retry.max-attempts, spring-retry.md"))
			.isEmpty();
	}

	private void keysOf(Path file, Map<String, Set<String>> keys) throws IOException {
		String name = this.documentation.relativize(file).toString();
		List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
		for (int i = 0; i < lines.size(); i++) {
			String trimmed = lines.get(i).stripLeading();
			if (trimmed.startsWith("```")) {
				String language = trimmed.substring(3).trim();
				int start = i + 1;
				StringBuilder block = new StringBuilder();
				for (i = i + 1; i < lines.size() && !lines.get(i).stripLeading().startsWith("```"); i++) {
					block.append(lines.get(i)).append('\n');
				}
				String location = name + ":" + start;
				switch (language) {
					case "yaml", "yml" ->
						yamlKeys(block.toString(), location).forEach((key) -> add(keys, key, location));
					case "properties" ->
						propertiesKeys(block.toString(), location).forEach((key) -> add(keys, key, location));
					default -> {
						String[] blockLines = block.toString().split("\n", -1);
						for (int j = 0; j < blockLines.length; j++) {
							String at = name + ":" + (start + 1 + j);
							namesIn(blockLines[j]).forEach((key) -> add(keys, key, at));
						}
					}
				}
			}
			else {
				String at = name + ":" + (i + 1);
				namesIn(lines.get(i)).forEach((key) -> add(keys, key, at));
			}
		}
	}

	private static void add(Map<String, Set<String>> keys, String key, String location) {
		keys.computeIfAbsent(key, (k) -> new LinkedHashSet<>()).add(location);
	}

	/**
	 * The {@code retry.*} names in a line of prose or of a code block that is not YAML or
	 * properties, without the starter's broker object names and without assigned values.
	 */
	static Set<String> namesIn(String line) {
		Set<String> names = new LinkedHashSet<>();
		StringBuilder scanned = new StringBuilder(line);
		Matcher assignment = ASSIGNMENT.matcher(line);
		while (assignment.find()) {
			// Blank the value out: `retry.parking-lot: retry.parking-lot.quorum` names
			// one key.
			for (int i = assignment.start(3); i < assignment.end(3); i++) {
				scanned.setCharAt(i, ' ');
			}
		}
		Matcher name = NAME.matcher(scanned);
		while (name.find()) {
			String found = name.group();
			if (!isBrokerObject(found)) {
				names.add(found);
			}
		}
		return names;
	}

	private static boolean isBrokerObject(String name) {
		return name.equals(RetryTopology.DELAY_EXCHANGE) || name.equals(RetryTopology.RETURN_EXCHANGE)
				|| name.equals(RetryTopology.UNROUTABLE_EXCHANGE) || name.equals(RetryTopology.PARKED_EXCHANGE)
				|| name.equals(RetryTopology.UNCLAIMED_EXCHANGE) || name.startsWith(RetryTopology.TIER_QUEUE_PREFIX)
				|| name.startsWith(RetryTopology.SHARED_PARKING_LOT + ".") || name.equals("retry.scheduled")
				|| name.startsWith("retry.scheduled.");
	}

	private static List<String> yamlKeys(String yaml, String location) {
		List<PropertySource<?>> sources;
		try {
			sources = new YamlPropertySourceLoader().load(location,
					new ByteArrayResource(yaml.getBytes(StandardCharsets.UTF_8)));
		}
		catch (IOException | RuntimeException ex) {
			throw new AssertionError("The YAML snippet at " + location + " does not parse", ex);
		}
		List<String> keys = new ArrayList<>();
		for (PropertySource<?> source : sources) {
			for (String key : ((EnumerablePropertySource<?>) source).getPropertyNames()) {
				if (key.startsWith("retry.")) {
					keys.add(INDEX.matcher(key).replaceAll(""));
				}
			}
		}
		return keys;
	}

	private static List<String> propertiesKeys(String text, String location) {
		Properties properties = new Properties();
		try {
			properties.load(new StringReader(text));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(location, ex);
		}
		return properties.stringPropertyNames()
			.stream()
			.map(String::strip)
			.filter((key) -> key.startsWith("retry."))
			.toList();
	}

	/** The {@code retry.*} properties and groups of the configuration metadata. */
	private static final class Metadata {

		private final Set<String> properties = new LinkedHashSet<>();

		private final Set<String> groups = new LinkedHashSet<>();

		/**
		 * Map properties, such as {@code retry.policies}, and the type of their values.
		 */
		private final Map<String, String> maps = new HashMap<>();

		/** The groups of each type, such as {@code retry.defaults}. */
		private final Map<String, List<String>> groupsOfType = new HashMap<>();

		static Metadata load() throws IOException {
			Metadata metadata = new Metadata();
			List<URL> files = Collections.list(DocumentationKeysTests.class.getClassLoader()
				.getResources("META-INF/spring-configuration-metadata.json"));
			for (URL file : files) {
				String json;
				try (InputStream in = file.openStream()) {
					json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
				}
				List<Map<String, Object>> properties = JsonPath.read(json, "$..properties[*]");
				for (Map<String, Object> property : properties) {
					String name = (String) property.get("name");
					if (name.startsWith("retry.")) {
						metadata.properties.add(name);
						Matcher map = MAP_VALUE_TYPE.matcher(String.valueOf(property.get("type")));
						if (map.matches()) {
							metadata.maps.put(name, map.group(1).trim());
						}
					}
				}
				List<Map<String, Object>> groups = JsonPath.read(json, "$..groups[*]");
				for (Map<String, Object> group : groups) {
					String name = (String) group.get("name");
					if (name.equals("retry") || name.startsWith("retry.")) {
						metadata.groups.add(name);
						metadata.groupsOfType
							.computeIfAbsent(String.valueOf(group.get("type")), (type) -> new ArrayList<>())
							.add(name);
					}
				}
			}
			return metadata;
		}

		/**
		 * Whether a key, as the documentation writes it, is a key of the metadata.
		 * @param written such as {@code retry.defaults.jitter},
		 * {@code retry.policies.<name>.*}, {@code retry.tiers[0]}
		 */
		boolean exists(String written) {
			String key = written.replaceAll("\\[\\d+\\]", "").replaceAll("\\[([^\\]]*)\\]", ".$1");
			if (key.endsWith(".*")) {
				String prefix = key.substring(0, key.length() - 1);
				if (this.properties.stream().anyMatch((property) -> property.startsWith(prefix))) {
					return true;
				}
			}
			if (this.properties.contains(key) || this.groups.contains(key)) {
				return true;
			}
			for (Map.Entry<String, String> map : this.maps.entrySet()) {
				String prefix = map.getKey() + ".";
				if (!key.startsWith(prefix)) {
					continue;
				}
				// The next element is the entry's name, whatever it is.
				String entry = key.substring(prefix.length());
				int end = entry.indexOf('.');
				if (end < 0) {
					return true;
				}
				String rest = entry.substring(end + 1);
				for (String group : this.groupsOfType.getOrDefault(map.getValue(), List.of())) {
					if (exists(group + "." + rest)) {
						return true;
					}
				}
			}
			return false;
		}

	}

}
