package io.github.tieredretry.api;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.Stream;

import io.github.tieredretry.annotation.RetryableListener;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The public API of the auto-configuration jar, recorded in {@code api/public-api.txt}:
 * every public type outside {@code io.github.tieredretry.internal} (see
 * {@link ApiBoundaryTests}) and its public and protected members, one per line, sorted. A
 * change to what users can touch, compatible or not, changes that file, so it is seen in
 * review (no release exists yet to compare against with japicmp). Recorded on Java 17,
 * the build's baseline. After an intended change:
 * {@code ./mvnw -pl retry-autoconfigure test -Dtest=PublicApiRecordTests -Dapi.record=update}
 * and commit the file with the change.
 */
class PublicApiRecordTests {

	private static final Path RECORD = Path.of("api", "public-api.txt");

	@Test
	void publicApiIsAsRecorded() throws Exception {
		String current = String.join("\n", publicApi()) + "\n";
		if ("update".equals(System.getProperty("api.record"))) {
			Files.createDirectories(RECORD.getParent());
			Files.writeString(RECORD, current, StandardCharsets.UTF_8);
		}
		assertThat(RECORD).as("the API record; after an intended change rerun with -Dapi.record=update").exists();
		List<String> recorded = Files.readAllLines(RECORD, StandardCharsets.UTF_8);
		List<String> added = new ArrayList<>(publicApi());
		added.removeAll(recorded);
		List<String> removed = new ArrayList<>(recorded);
		removed.removeAll(publicApi());
		assertThat(added).as("public API that %s does not record (rerun with -Dapi.record=update if intended)", RECORD)
			.isEmpty();
		assertThat(removed)
			.as("public API recorded in %s that is gone (rerun with -Dapi.record=update if intended)", RECORD)
			.isEmpty();
	}

	private static List<String> publicApi() throws IOException, URISyntaxException, ClassNotFoundException {
		Path classes = Path.of(RetryableListener.class.getProtectionDomain().getCodeSource().getLocation().toURI());
		TreeSet<String> api = new TreeSet<>();
		try (Stream<Path> files = Files.walk(classes)) {
			for (Path file : files.filter((path) -> path.toString().endsWith(".class")).toList()) {
				String name = classes.relativize(file).toString().replace(file.getFileSystem().getSeparator(), ".");
				name = name.substring(0, name.length() - ".class".length());
				if (name.endsWith("package-info") || name.endsWith("module-info")) {
					continue;
				}
				Class<?> type = Class.forName(name, false, PublicApiRecordTests.class.getClassLoader());
				if (isExported(type)) {
					describe(type, api);
				}
			}
		}
		return new ArrayList<>(api);
	}

	// Public, and so are the types that enclose it; not synthetic or anonymous; not in an
	// internal package.
	private static boolean isExported(Class<?> type) {
		if (ApiBoundaryTests.isInternal(type.getPackageName())) {
			return false;
		}
		for (Class<?> current = type; current != null; current = current.getEnclosingClass()) {
			if (!Modifier.isPublic(current.getModifiers()) || current.isAnonymousClass() || current.isSynthetic()) {
				return false;
			}
		}
		return true;
	}

	private static void describe(Class<?> type, TreeSet<String> api) {
		String name = type.getName();
		api.add(name + " " + kind(type) + supertypes(type));
		for (Constructor<?> constructor : type.getDeclaredConstructors()) {
			if (isVisible(constructor.getModifiers()) && !constructor.isSynthetic()) {
				api.add(name + " :: " + constructor.toGenericString());
			}
		}
		for (Method method : type.getDeclaredMethods()) {
			if (isVisible(method.getModifiers()) && !method.isSynthetic() && !method.isBridge()) {
				Object defaultValue = method.getDefaultValue();
				api.add(name + " :: " + method.toGenericString()
						+ ((defaultValue != null) ? " default " + describe(defaultValue) : ""));
			}
		}
		for (Field field : type.getDeclaredFields()) {
			if (isVisible(field.getModifiers()) && !field.isSynthetic()) {
				api.add(name + " :: " + field.toGenericString());
			}
		}
	}

	private static String describe(Object value) {
		if (value instanceof Object[] array) {
			return Arrays.deepToString(array);
		}
		if (value.getClass().isArray()) {
			return Arrays.deepToString(new Object[] { value });
		}
		return value.toString();
	}

	private static boolean isVisible(int modifiers) {
		return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
	}

	private static String kind(Class<?> type) {
		if (type.isAnnotation()) {
			return "@interface";
		}
		if (type.isRecord()) {
			return "record";
		}
		if (type.isEnum()) {
			return "enum";
		}
		if (type.isInterface()) {
			return "interface";
		}
		return (Modifier.isAbstract(type.getModifiers()) ? "abstract " : "")
				+ (Modifier.isFinal(type.getModifiers()) ? "final " : "") + "class";
	}

	private static String supertypes(Class<?> type) {
		List<String> supertypes = new ArrayList<>();
		if (type.getGenericSuperclass() != null && type.getSuperclass() != Object.class
				&& type.getSuperclass() != Record.class && type.getSuperclass() != Enum.class) {
			supertypes.add(type.getGenericSuperclass().getTypeName());
		}
		Arrays.stream(type.getGenericInterfaces())
			.map(java.lang.reflect.Type::getTypeName)
			.filter((name) -> !name.equals("java.lang.annotation.Annotation"))
			.forEach(supertypes::add);
		return supertypes.isEmpty() ? "" : " : " + String.join(", ", supertypes);
	}

}
