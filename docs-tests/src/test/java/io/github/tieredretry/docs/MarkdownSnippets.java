package io.github.tieredretry.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The fenced code blocks of Markdown files, each with the file and line it starts at.
 */
final class MarkdownSnippets {

	/**
	 * A line such as {@code `src/main/resources/application.yml`:} names the next block's
	 * file.
	 */
	private static final Pattern FILE_LABEL = Pattern.compile("`([^`\\s]+)`:");

	private MarkdownSnippets() {
	}

	/**
	 * The Markdown files a user reads: README.md, CONTRIBUTING.md and those of docs/, in
	 * that order.
	 * @param root the repository
	 * @return their paths
	 */
	static List<Path> documentationFiles(Path root) throws IOException {
		List<Path> files = new ArrayList<>();
		files.add(root.resolve("README.md"));
		files.add(root.resolve("CONTRIBUTING.md"));
		try (Stream<Path> docs = Files.walk(root.resolve("docs"))) {
			docs.filter((path) -> path.toString().endsWith(".md")).sorted().forEach(files::add);
		}
		return files;
	}

	static List<Snippet> of(Path root, Path file) {
		List<String> lines;
		try {
			lines = Files.readAllLines(file);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		String name = root.relativize(file).toString();
		List<Snippet> snippets = new ArrayList<>();
		String label = null;
		for (int i = 0; i < lines.size(); i++) {
			String line = lines.get(i);
			String trimmed = line.stripLeading();
			if (!trimmed.startsWith("```")) {
				if (!line.isBlank()) {
					Matcher matcher = FILE_LABEL.matcher(line.trim());
					label = matcher.matches() ? matcher.group(1) : null;
				}
				continue;
			}
			int indent = line.length() - trimmed.length();
			String language = trimmed.substring(3).trim();
			int start = i + 1;
			StringBuilder text = new StringBuilder();
			for (i = i + 1; i < lines.size() && !lines.get(i).stripLeading().startsWith("```"); i++) {
				String content = lines.get(i);
				text.append(content.substring(Math.min(indent, content.length() - content.stripLeading().length())))
					.append('\n');
			}
			snippets.add(new Snippet(name, start, language, text.toString(), label));
			label = null;
		}
		return snippets;
	}

	/**
	 * A fenced code block.
	 *
	 * @param file the Markdown file, relative to the repository
	 * @param line the line of its opening fence
	 * @param language what follows the fence ({@code xml}, {@code java}, ...)
	 * @param text its content
	 * @param label the file it is, when the line before it says so (as the
	 * getting-started page does), or {@code null}
	 */
	record Snippet(String file, int line, String language, String text, String label) {

		String location() {
			return this.file + ":" + this.line;
		}

		/** A name usable as a directory and artifact id: {@code readme-md-80}. */
		String id() {
			return (this.file.replaceAll("[^A-Za-z0-9]+", "-") + "-" + this.line).toLowerCase(java.util.Locale.ROOT);
		}

	}

}
