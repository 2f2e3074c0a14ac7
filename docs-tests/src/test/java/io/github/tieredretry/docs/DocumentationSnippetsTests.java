package io.github.tieredretry.docs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import io.github.tieredretry.docs.MarkdownSnippets.Snippet;
import org.junit.jupiter.api.Test;

import org.springframework.util.FileSystemUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Builds what README.md, CONTRIBUTING.md and docs/ tell a user to write, as written, with
 * Maven, against the artifacts this build has just installed into a local repository of
 * their own (the rest comes from the build's local repository, read only, or from Maven
 * Central):
 * <ul>
 * <li>every Maven dependency snippet, in a project with Spring Boot's parent and the
 * README's import of the {@code tiered-retry-dependencies} BOM (the one place that shows
 * it), so that a snippet needs no version of its own;</li>
 * <li>every application whose files the documentation names (the getting-started page's
 * {@code pom.xml}, Java class and {@code application.yml}), packaged as a user
 * would.</li>
 * </ul>
 * A snippet that does not build fails the test naming its file and line. Gradle snippets
 * are not built: the build machines have no Gradle.
 */
class DocumentationSnippetsTests {

	private static final Pattern BOM_IMPORT = Pattern.compile("<dependencyManagement>.*?</dependencyManagement>",
			Pattern.DOTALL);

	private static final Pattern PACKAGE = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);

	private static final Pattern PARENT = Pattern.compile("<parent>.*?</parent>", Pattern.DOTALL);

	private static final Pattern ARTIFACT_ID = Pattern.compile("<artifactId>([^<]+)</artifactId>");

	private final Path documentation = Path.of(System.getProperty("snippets.documentation", "..")).normalize();

	private final Path work = Path.of(System.getProperty("snippets.work", "target/snippets"));

	@Test
	void mavenSnippetsAndTheQuickstartApplicationBuildAsWritten() throws Exception {
		List<Snippet> snippets = snippets();
		List<Snippet> bomImports = snippets.stream()
			.filter((snippet) -> isMaven(snippet) && snippet.label() == null
					&& snippet.text().contains("tiered-retry-dependencies")
					&& snippet.text().contains("<scope>import</scope>"))
			.toList();
		assertThat(bomImports)
			.as("dependency snippets that import the BOM (the README's Install shows it once; complete "
					+ "applications import it themselves)")
			.extracting(Snippet::file)
			.containsExactly("README.md");
		Snippet bomImport = bomImports.get(0);
		Matcher bomImportElement = BOM_IMPORT.matcher(bomImport.text());
		assertThat(bomImportElement.find()).as("%s has a <dependencyManagement> element", bomImport.location())
			.isTrue();
		String springBootVersion = System.getProperty("snippets.spring-boot-version", "4.1.1");

		FileSystemUtils.deleteRecursively(this.work);
		Map<String, Snippet> projects = new LinkedHashMap<>();
		for (Snippet snippet : snippets) {
			if (isMaven(snippet) && snippet.label() == null && snippet.text().contains("<dependency>")) {
				String dependencyManagement = (snippet == bomImport) ? "" : bomImportElement.group();
				writeFragmentProject(snippet, springBootVersion, dependencyManagement);
				projects.put(snippet.id(), snippet);
			}
		}
		List<Snippet> applications = writeApplications(snippets);
		applications.forEach((pom) -> projects.put(pom.id(), pom));
		assertThat(applications).as("applications the documentation gives whole")
			.extracting(Snippet::file)
			.contains("docs/getting-started.md");
		assertThat(projects).hasSizeGreaterThanOrEqualTo(5);

		writeAggregator(projects.keySet());
		Build build = build();
		if (build.exitCode() != 0) {
			fail(failureMessage(projects, build));
		}
	}

	private List<Snippet> snippets() throws IOException {
		return MarkdownSnippets.documentationFiles(this.documentation)
			.stream()
			.flatMap((file) -> MarkdownSnippets.of(this.documentation, file).stream())
			.collect(Collectors.toList());
	}

	private static boolean isMaven(Snippet snippet) {
		return "xml".equals(snippet.language());
	}

	private void writeFragmentProject(Snippet snippet, String springBootVersion, String dependencyManagement)
			throws IOException {
		String text = snippet.text().strip();
		String content = text.startsWith("<dependency>") ? "<dependencies>\n" + text + "\n</dependencies>" : text;
		String pom = """
				<?xml version="1.0" encoding="UTF-8"?>
				<project xmlns="http://maven.apache.org/POM/4.0.0">
				<modelVersion>4.0.0</modelVersion>
				<parent>
				<groupId>org.springframework.boot</groupId>
				<artifactId>spring-boot-starter-parent</artifactId>
				<version>%s</version>
				</parent>
				<groupId>com.example.snippets</groupId>
				<artifactId>%s</artifactId>
				<version>1.0.0</version>
				<name>%s</name>
				<properties>
				<java.version>17</java.version>
				</properties>
				%s
				%s
				</project>
				""".formatted(springBootVersion, snippet.id(), snippet.id(), dependencyManagement, content);
		write(this.work.resolve(snippet.id()).resolve("pom.xml"), pom);
	}

	/**
	 * The files of each application a Markdown file gives whole (code blocks labelled
	 * with their path), in a directory of its own.
	 * @return the {@code pom.xml} snippet of each
	 */
	private List<Snippet> writeApplications(List<Snippet> snippets) throws IOException {
		List<Snippet> poms = new ArrayList<>();
		Map<String, List<Snippet>> byFile = snippets.stream()
			.filter((snippet) -> snippet.label() != null)
			.collect(Collectors.groupingBy(Snippet::file, LinkedHashMap::new, Collectors.toList()));
		for (List<Snippet> files : byFile.values()) {
			Snippet pom = files.stream().filter((file) -> file.label().equals("pom.xml")).findFirst().orElse(null);
			if (pom == null) {
				continue;
			}
			Path directory = this.work.resolve(pom.id());
			for (Snippet file : files) {
				if (file.label().endsWith(".java")) {
					Matcher matcher = PACKAGE.matcher(file.text());
					assertThat(matcher.find()).as("%s has a package declaration", file.location()).isTrue();
					assertThat(file.label()).as("%s: the path of the Java file", file.location())
						.endsWith(matcher.group(1).replace('.', '/') + "/" + Path.of(file.label()).getFileName());
				}
				if (!file.label().endsWith(".kts")) {
					write(directory.resolve(file.label()), file.text());
				}
			}
			poms.add(pom);
		}
		return poms;
	}

	private void writeAggregator(Iterable<String> modules) throws IOException {
		StringBuilder list = new StringBuilder();
		modules.forEach((module) -> list.append("<module>").append(module).append("</module>\n"));
		write(this.work.resolve("pom.xml"), """
				<?xml version="1.0" encoding="UTF-8"?>
				<project xmlns="http://maven.apache.org/POM/4.0.0">
				<modelVersion>4.0.0</modelVersion>
				<groupId>com.example.snippets</groupId>
				<artifactId>snippets</artifactId>
				<version>1.0.0</version>
				<packaging>pom</packaging>
				<modules>
				%s</modules>
				</project>
				""".formatted(list));
		// The snippets' builds are not part of this project: its .mvn/maven.config must
		// not apply to them.
		Files.createDirectories(this.work.resolve(".mvn"));
	}

	private Build build() throws IOException, InterruptedException {
		Path log = this.work.resolve("build.log");
		String localRepository = System.getProperty("snippets.local-repository");
		String tail = System.getProperty("snippets.local-repository-tail");
		assertThat(localRepository).as("snippets.local-repository (set by the module's POM)").isNotNull();
		assertThat(Path.of(localRepository, "io/github/tieredretry/tiered-retry-dependencies"))
			.as("the BOM installed by the invoker plugin")
			.isDirectory();
		List<String> command = new ArrayList<>(List.of(System.getProperty("snippets.maven", "../mvnw"), "-B", "-fae",
				"-Dmaven.repo.local=" + localRepository, "-DskipTests", "-f",
				this.work.resolve("pom.xml").toAbsolutePath().toString(), "package"));
		if (tail != null) {
			// The rest is read from the build's own repository (not written to), or
			// downloaded from Maven Central into the throw-away one.
			command.add(3, "-Dmaven.repo.local.tail=" + tail);
		}
		Process process = new ProcessBuilder(command).directory(this.work.toFile())
			.redirectErrorStream(true)
			.redirectOutput(log.toFile())
			.start();
		if (!process.waitFor(5, TimeUnit.MINUTES)) {
			process.destroyForcibly();
			fail("The snippets' build did not end within 5 minutes; its log: " + log.toAbsolutePath());
		}
		return new Build(process.exitValue(), Files.readAllLines(log, StandardCharsets.UTF_8), log);
	}

	private String failureMessage(Map<String, Snippet> projects, Build build) {
		List<String> errors = build.output()
			.stream()
			.filter((line) -> line.startsWith("[ERROR]") || line.contains("FAILURE"))
			.toList();
		List<String> failed = new ArrayList<>();
		projects.forEach((id, snippet) -> {
			String artifactId = artifactId(snippet);
			List<String> own = errors.stream()
				.filter((line) -> line.contains(id) || line.contains(" " + artifactId + " ")
						|| line.contains("project " + artifactId + ":") || line.contains(":" + artifactId + ":"))
				.toList();
			if (!own.isEmpty()) {
				failed.add(snippet.location() + " (" + snippet.language() + " snippet) does not build as written:\n    "
						+ String.join("\n    ", own));
			}
		});
		String which = failed.isEmpty() ? "The snippets' build failed; every snippet: "
				+ projects.values().stream().map(Snippet::location).toList() : String.join("\n", failed);
		return which + "\nMaven's output: " + build.log().toAbsolutePath() + "\n"
				+ String.join("\n", errors.subList(0, Math.min(errors.size(), 40)));
	}

	private static String artifactId(Snippet snippet) {
		if (snippet.label() == null) {
			return snippet.id();
		}
		Matcher matcher = ARTIFACT_ID.matcher(PARENT.matcher(snippet.text()).replaceFirst(""));
		return matcher.find() ? matcher.group(1) : snippet.id();
	}

	private static void write(Path file, String content) throws IOException {
		Files.createDirectories(file.getParent());
		Files.writeString(file, content, StandardCharsets.UTF_8);
	}

	private record Build(int exitCode, List<String> output, Path log) {

	}

}
