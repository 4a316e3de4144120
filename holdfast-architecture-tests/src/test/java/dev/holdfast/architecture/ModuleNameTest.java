package dev.holdfast.architecture;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.jar.JarFile;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every library jar names its module in its manifest, after the root package it holds. The jars exist once the reactor has packaged
 * them: in {@code mvn verify} this module is built last. A jar that is missing, or older than its
 * pom, the parent pom or its classes (left from an earlier build, as after {@code mvn test}), is not
 * checked: the test is skipped.
 */
class ModuleNameTest {

    @ParameterizedTest(name = "{0} is module {1}")
    @CsvSource({
        "holdfast-core, dev.holdfast.core",
        "holdfast-hibernate, dev.holdfast.hibernate",
        "holdfast-shedlock, dev.holdfast.shedlock",
        "holdfast-spring-boot-starter, dev.holdfast.spring.boot",
        "holdfast-testing, dev.holdfast.testing.contract",
        "holdfast-test-databases, dev.holdfast.testing"
    })
    void libraryJarNamesItsModule(String artifact, String moduleName) throws IOException {
        Path jar = Reactor.ROOT
                .resolve(artifact)
                .resolve("target")
                .resolve(artifact + "-" + System.getProperty("holdfast.version") + ".jar");
        Assumptions.assumeTrue(Files.isRegularFile(jar), () -> jar + " is not built yet (mvn verify builds it)");
        Assumptions.assumeTrue(
                builtAfter(
                        jar,
                        Reactor.ROOT.resolve("pom.xml"),
                        Reactor.ROOT.resolve(artifact).resolve("pom.xml"),
                        Reactor.ROOT.resolve(artifact).resolve("target/classes")),
                () -> jar + " is older than what it is built from: not built by this run");
        try (JarFile file = new JarFile(jar.toFile())) {
            assertThat(file.getManifest().getMainAttributes().getValue("Automatic-Module-Name"))
                    .isEqualTo(moduleName);
        }
    }

    private static boolean builtAfter(Path jar, Path... sources) throws IOException {
        FileTime built = Files.getLastModifiedTime(jar);
        for (Path source : sources) {
            try (Stream<Path> files = Files.walk(source)) {
                for (Path f : files.filter(Files::isRegularFile).toList()) {
                    if (Files.getLastModifiedTime(f).compareTo(built) > 0) {
                        return false;
                    }
                }
            }
        }
        return true;
    }
}
