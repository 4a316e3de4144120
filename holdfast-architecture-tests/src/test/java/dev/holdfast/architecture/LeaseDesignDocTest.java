package dev.holdfast.architecture;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code docs/design/leases.md} names every class of {@code dev.holdfast.lease.internal} (as {@code `Name`}), so
 * that a contributor finds each one's job there, and a class added without a line in it fails the build.
 */
class LeaseDesignDocTest {

    private static final Path DESIGN = Reactor.ROOT.resolve("docs/design/leases.md");
    private static final Path INTERNAL =
            Reactor.ROOT.resolve("holdfast-core/src/main/java/dev/holdfast/lease/internal");

    @Test
    void everyInternalLeaseClassIsNamedInTheDesignPage() throws IOException {
        String design = Files.readString(DESIGN);
        List<String> classes;
        try (Stream<Path> files = Files.list(INTERNAL)) {
            classes = files.map(f -> f.getFileName().toString())
                    .filter(n -> n.endsWith(".java") && !n.equals("package-info.java"))
                    .map(n -> n.substring(0, n.length() - ".java".length()))
                    .sorted()
                    .toList();
        }
        assertThat(classes).as("internal lease classes found").isNotEmpty();
        assertThat(classes)
                .as("internal lease classes not named in %s", Reactor.ROOT.relativize(DESIGN))
                .filteredOn(c -> !design.contains("`" + c + "`"))
                .isEmpty();
    }
}
