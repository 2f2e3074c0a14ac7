package io.github.tieredretry.api;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SlicesRuleDefinition;
import io.github.tieredretry.annotation.Backend;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The package dependencies that docs/architecture.md draws ("Packages", the column
 * "Imports from") are those of the code, no more and no fewer: a class that reaches into
 * a package its own may not import fails the build (checked on the bytecode, with
 * ArchUnit), and so does a document that draws an arrow the code no longer has.
 */
class PackageDependencyTests {

	private static final String ROOT = "io.github.tieredretry";

	private static final Path ARCHITECTURE = Path.of("..", "docs", "architecture.md");

	// This module's classes only (not the test brokers' on the class path).
	private static final JavaClasses classes = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPath(mainClasses());

	@Test
	void everyPackageOfTheStarterIsInTheDocument() throws IOException {
		assertThat(documented().keySet()).containsExactlyInAnyOrderElementsOf(actual().keySet());
	}

	@Test
	void packagesDependOnEachOtherWithoutCycles() {
		SlicesRuleDefinition.slices().matching(ROOT + ".(**)").should().beFreeOfCycles().check(classes);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("documentedPackages")
	void packageImportsExactlyWhatTheDocumentSays(String name, Set<String> documented) {
		Map<String, List<String>> actual = actual().getOrDefault(name, Map.of());
		Set<String> undocumented = new TreeSet<>(actual.keySet());
		undocumented.removeAll(documented);
		assertThat(undocumented.stream().collect(Collectors.toMap((target) -> target, actual::get)))
			.as("dependencies of package %s that docs/architecture.md does not draw (first uses shown)", name)
			.isEmpty();
		Set<String> gone = new TreeSet<>(documented);
		gone.removeAll(actual.keySet());
		// A class that only uses another package's constants has no edge in its bytecode
		// (javac inlines them): its sources do.
		gone.removeIf((target) -> sourcesName(name, target));
		assertThat(gone).as("dependencies of package %s that docs/architecture.md draws and the code has not", name)
			.isEmpty();
	}

	static Stream<Arguments> documentedPackages() throws IOException {
		return documented().entrySet().stream().map((entry) -> Arguments.of(entry.getKey(), entry.getValue()));
	}

	// Package -> the packages it imports from, as the table of "## Packages" says.
	private static Map<String, Set<String>> documented() throws IOException {
		List<String> lines = Files.readAllLines(ARCHITECTURE, StandardCharsets.UTF_8);
		int start = lines.indexOf("## Packages");
		assertThat(start).as("the section Packages of %s", ARCHITECTURE).isNotNegative();
		Map<String, String> column = new LinkedHashMap<>();
		for (String line : lines.subList(start + 1, lines.size())) {
			if (line.startsWith("## ")) {
				break;
			}
			String[] cells = line.split("\\|");
			if (cells.length >= 5 && cells[1].trim().matches("`[a-z]+(\\.[a-z]+)*`")) {
				column.put(cells[1].trim().replace("`", ""), cells[4].trim());
			}
		}
		Map<String, Set<String>> documented = new TreeMap<>();
		column.forEach((name, imports) -> {
			Set<String> packages = new TreeSet<>();
			if (imports.startsWith("every package except ")) {
				packages.addAll(column.keySet());
				packages.remove(name);
				Arrays.stream(imports.substring("every package except ".length()).split(","))
					.map(String::trim)
					.forEach(packages::remove);
			}
			else if (!imports.equals("nothing")) {
				Arrays.stream(imports.split(",")).map(String::trim).forEach(packages::add);
			}
			documented.put(name, packages);
		});
		return documented;
	}

	// Package -> package it depends on -> the first few class-to-class uses.
	private static Map<String, Map<String, List<String>>> actual() {
		Map<String, Map<String, List<String>>> actual = new TreeMap<>();
		for (JavaClass javaClass : classes) {
			String from = packageOf(javaClass);
			if (from == null) {
				continue;
			}
			Map<String, List<String>> targets = actual.computeIfAbsent(from, (name) -> new TreeMap<>());
			for (Dependency dependency : javaClass.getDirectDependenciesFromSelf()) {
				String to = packageOf(dependency.getTargetClass());
				if (to != null && !to.equals(from)) {
					List<String> uses = targets.computeIfAbsent(to, (name) -> new ArrayList<>());
					if (uses.size() < 3) {
						uses.add(javaClass.getSimpleName() + " -> " + dependency.getTargetClass().getName());
					}
				}
			}
		}
		return actual;
	}

	private static boolean sourcesName(String name, String target) {
		Path sources = Path.of("src", "main", "java", "io", "github", "tieredretry").resolve(name.replace('.', '/'));
		try (Stream<Path> files = Files.list(sources)) {
			for (Path file : files.filter(Files::isRegularFile).toList()) {
				if (Files.readString(file, StandardCharsets.UTF_8).contains(ROOT + "." + target + ".")) {
					return true;
				}
			}
			return false;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static Path mainClasses() {
		try {
			return Path.of(Backend.class.getProtectionDomain().getCodeSource().getLocation().toURI());
		}
		catch (URISyntaxException ex) {
			throw new IllegalStateException(ex);
		}
	}

	// The starter's package of a class, below io.github.tieredretry (e.g.
	// internal.delivery).
	private static String packageOf(JavaClass javaClass) {
		String name = javaClass.getPackageName();
		if (!name.startsWith(ROOT + ".")) {
			return null;
		}
		return name.substring(ROOT.length() + 1);
	}

}
