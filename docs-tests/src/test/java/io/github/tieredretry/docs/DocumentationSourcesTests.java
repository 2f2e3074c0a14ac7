package io.github.tieredretry.docs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import io.github.tieredretry.docs.MarkdownSnippets.Snippet;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Java blocks of the documentation that a test of another module compiles and runs as
 * written: the test's source holds the block between two marker comments,
 * {@code // <markdown file> "<heading>" begins} (such as
 * {@code // docs/backends.md "Exact delays: ..." begins}) and {@code ... ends}, and this
 * test checks that it is the first {@code java} block under that heading, token for token
 * (the build's formatter lays the test's code out in its own way, so whitespace does not
 * count).
 */
class DocumentationSourcesTests {

	private static final List<RunBlock> RUN_BLOCKS = List.of(new RunBlock("docs/backends.md",
			"Exact delays: listeners of the AMQP 1.0 client", "reliability/src/test/java/io/github/"
					+ "tieredretry/reliability/conditions/ExactDelaysSnippetIntegrationTests.java"));

	private final Path documentation = Path.of(System.getProperty("snippets.documentation", "..")).normalize();

	@Test
	void javaBlocksThatTestsRunAreTheTestsCodeAsWritten() throws IOException {
		for (RunBlock block : RUN_BLOCKS) {
			String documented = documentedBlock(block);
			String tested = testedBlock(block);
			assertThat(withoutWhitespace(tested))
				.as("%s, the block under \"%s\", and the code that %s runs:%n%s%n---%n%s", block.markdown(),
						block.heading(), block.source(), documented, tested)
				.isEqualTo(withoutWhitespace(documented));
		}
	}

	private String documentedBlock(RunBlock block) throws IOException {
		Path file = this.documentation.resolve(block.markdown());
		List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
		int heading = -1;
		int next = lines.size();
		for (int i = 0; i < lines.size(); i++) {
			if (lines.get(i).startsWith("#")) {
				if (heading < 0 && lines.get(i).replaceFirst("^#+\\s*", "").equals(block.heading())) {
					heading = i + 1;
				}
				else if (heading >= 0) {
					next = i + 1;
					break;
				}
			}
		}
		assertThat(heading).as("the heading \"%s\" in %s", block.heading(), block.markdown()).isPositive();
		int start = heading;
		int end = next;
		return MarkdownSnippets.of(this.documentation, file)
			.stream()
			.filter((snippet) -> snippet.line() > start && snippet.line() < end && "java".equals(snippet.language()))
			.map(Snippet::text)
			.findFirst()
			.orElseThrow(
					() -> new AssertionError("No java block under \"" + block.heading() + "\" in " + block.markdown()));
	}

	private String testedBlock(RunBlock block) throws IOException {
		String source = Files.readString(this.documentation.resolve(block.source()), StandardCharsets.UTF_8);
		String marker = "// " + block.markdown() + " \"" + block.heading() + "\" ";
		int begins = source.indexOf(marker + "begins");
		int ends = source.indexOf(marker + "ends");
		assertThat(begins).as("%s has the marker %sbegins", block.source(), marker).isNotNegative();
		assertThat(ends).as("%s has the marker %sends", block.source(), marker).isGreaterThan(begins);
		return source.substring(source.indexOf('\n', begins) + 1, ends);
	}

	private static String withoutWhitespace(String code) {
		return code.replaceAll("\\s+", "");
	}

	/**
	 * A block of the documentation that a test runs.
	 *
	 * @param markdown the Markdown file, relative to the repository
	 * @param heading the heading the block is under (its first {@code java} block)
	 * @param source the test's source, relative to the repository
	 */
	private record RunBlock(String markdown, String heading, String source) {

	}

}
