package io.github.tieredretry.api;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.github.tieredretry.annotation.RetryableListener;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The boundary between what users touch and the rest, checked on the bytecode (ArchUnit)
 * and the sources. A package is either exported (listed in {@link #EXPORTED}, its public
 * types recorded by {@link PublicApiRecordTests}) or lies below
 * {@code io.github.tieredretry.internal}, whose types are public only so that the
 * starter's other packages can use them and may change in any release. The build fails
 * when an exported type's public signature names an internal type (an internal type would
 * leak into the API), when a package is neither, when an internal package does not say
 * so, and when an exported type has no documentation.
 */
class ApiBoundaryTests {

	static final String ROOT = "io.github.tieredretry";

	static final String INTERNAL = ROOT + ".internal";

	/**
	 * What users touch: annotations, properties, events, extension points, operations.
	 */
	static final Set<String> EXPORTED = Set.of("annotation", "autoconfigure", "delayedsend", "event", "headers",
			"listener", "observation", "parkinglot", "policy", "topology");

	private static final Path SOURCES = Path.of("src", "main", "java");

	private static final JavaClasses classes = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPath(mainClasses());

	static boolean isInternal(String packageName) {
		return packageName.equals(INTERNAL) || packageName.startsWith(INTERNAL + ".");
	}

	@Test
	void everyPackageIsExportedOrInternal() {
		Set<String> unclassified = new TreeSet<>();
		for (JavaClass javaClass : classes) {
			String name = javaClass.getPackageName();
			if (!isInternal(name) && !EXPORTED.contains(name.substring(ROOT.length() + 1))) {
				unclassified.add(name);
			}
		}
		assertThat(unclassified).as("packages neither exported (ApiBoundaryTests.EXPORTED) nor below %s", INTERNAL)
			.isEmpty();
	}

	@Test
	void noInternalTypeLeaksIntoTheApi() {
		List<String> leaks = new ArrayList<>();
		for (JavaClass type : classes) {
			if (!isExported(type)) {
				continue;
			}
			type.getRawSuperclass().ifPresent((superclass) -> check(type, "extends", superclass, leaks));
			type.getRawInterfaces().forEach((implemented) -> check(type, "implements", implemented, leaks));
			for (JavaMember member : type.getMembers()) {
				if (!isVisible(member.getModifiers())) {
					continue;
				}
				if (member instanceof JavaField field) {
					check(type, field.getName(), field.getType(), leaks);
				}
				else if (member instanceof JavaCodeUnit codeUnit) {
					String name = codeUnit.isConstructor() ? "<init>" : codeUnit.getName();
					codeUnit.getParameterTypes().forEach((parameter) -> check(type, name, parameter, leaks));
					check(type, name, codeUnit.getReturnType(), leaks);
					codeUnit.getExceptionTypes().forEach((thrown) -> check(type, name, thrown, leaks));
				}
			}
		}
		assertThat(leaks).as("internal types in the public signatures of exported types").isEmpty();
	}

	@Test
	void everyInternalPackageSaysSo() throws IOException {
		List<String> silent = new ArrayList<>();
		Set<String> packages = new TreeSet<>();
		classes.stream().map(JavaClass::getPackageName).filter(ApiBoundaryTests::isInternal).forEach(packages::add);
		for (String name : packages) {
			Path packageInfo = SOURCES.resolve(name.replace('.', '/')).resolve("package-info.java");
			if (!Files.exists(packageInfo)
					|| !Files.readString(packageInfo, StandardCharsets.UTF_8).contains(" * Internal: ")) {
				silent.add(name);
			}
		}
		assertThat(silent).as("internal packages whose package-info does not begin a paragraph with 'Internal: '")
			.isEmpty();
	}

	@Test
	void everyExportedTypeIsDocumented() {
		List<String> undocumented = new ArrayList<>();
		for (JavaClass type : classes) {
			if (isExported(type) && type.getEnclosingClass().isEmpty() && !hasJavadoc(type)) {
				undocumented.add(type.getName());
			}
		}
		assertThat(undocumented).as("exported types without a javadoc comment").isEmpty();
	}

	private static void check(JavaClass owner, String where, JavaType type, List<String> leaks) {
		for (JavaClass involved : type.getAllInvolvedRawTypes()) {
			JavaClass base = involved.getBaseComponentType();
			if (base.getPackageName().startsWith(ROOT + ".") && !isExported(base)) {
				leaks.add(owner.getName() + " " + where + " -> " + base.getName());
			}
		}
	}

	// Public, enclosed only by public types, and outside the internal packages.
	private static boolean isExported(JavaClass type) {
		if (isInternal(type.getPackageName())) {
			return false;
		}
		for (JavaClass current = type; current != null; current = current.getEnclosingClass().orElse(null)) {
			if (!current.getModifiers().contains(JavaModifier.PUBLIC) || current.isAnonymousClass()) {
				return false;
			}
		}
		return true;
	}

	private static boolean isVisible(Set<JavaModifier> modifiers) {
		return modifiers.contains(JavaModifier.PUBLIC) || modifiers.contains(JavaModifier.PROTECTED);
	}

	private static boolean hasJavadoc(JavaClass type) {
		Path source = SOURCES.resolve(type.getName().replace('.', '/') + ".java");
		try {
			String text = Files.readString(source, StandardCharsets.UTF_8);
			Pattern documented = Pattern.compile("\\*/\\s*(@[\\w.]+(\\([^)]*\\))?\\s*)*public\\s+[\\w\\s]*?"
					+ "(class|interface|enum|record|@interface)\\s+" + type.getSimpleName() + "\\b");
			return documented.matcher(text).find();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static Path mainClasses() {
		try {
			return Path.of(RetryableListener.class.getProtectionDomain().getCodeSource().getLocation().toURI());
		}
		catch (URISyntaxException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
