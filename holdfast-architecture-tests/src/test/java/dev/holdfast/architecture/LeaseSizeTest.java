package dev.holdfast.architecture;

import dev.holdfast.architecture.Reactor.Kind;
import dev.holdfast.architecture.Reactor.Module;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The size limits of the lease code (issue 27): no main Java file of {@code dev.holdfast.lease} or
 * its sub-packages, in any library module, has more than 400 lines of code, and {@code LeaseService.java}
 * no more than 200. Lines of code: blank lines and comments do not count, so documenting a type never
 * pushes it over its limit (the javadoc of the public API is complete and checked by doclint).
 */
class LeaseSizeTest {

    static final int MAX_CODE_LINES = 400;
    static final Map<String, Integer> MAX_CODE_LINES_OF = Map.of("LeaseService.java", 200);

    @Test
    void leaseFilesStayWithinTheirLimits() throws IOException {
        Map<String, Integer> lengths = new TreeMap<>();
        for (Module m : Reactor.MODULES) {
            Path lease = Reactor.ROOT.resolve(m.dir()).resolve("src/main/java/dev/holdfast/lease");
            if (m.kind() != Kind.LIBRARY || !Files.isDirectory(lease)) {
                continue;
            }
            try (Stream<Path> files = Files.walk(lease)) {
                for (Path file :
                        files.filter(f -> f.toString().endsWith(".java")).toList()) {
                    lengths.put(
                            Reactor.ROOT.relativize(file).toString().replace('\\', '/'),
                            codeLines(Files.readAllLines(file)));
                }
            }
        }
        assertThat(lengths).as("lease sources found").isNotEmpty();

        List<String> problems = new ArrayList<>();
        lengths.forEach((file, lines) -> {
            int limit = limitOf(file);
            if (lines > limit) {
                problems.add(file + " has " + lines + " lines of code, more than " + limit);
            }
        });
        assertThat(problems).as("lease file lengths").isEmpty();
    }

    @Test
    void blankLinesAndCommentsAreNotCode() {
        assertThat(codeLines(List.of(
                        "/**",
                        " * A type.",
                        " */",
                        "final class A {",
                        "",
                        "    // why",
                        "    /* a note */",
                        "    int x = 1; // trailing",
                        "    /* a",
                        "       b */",
                        "}")))
                .isEqualTo(3);
    }

    private static int limitOf(String file) {
        String name = file.substring(file.lastIndexOf('/') + 1);
        return MAX_CODE_LINES_OF.getOrDefault(name, MAX_CODE_LINES);
    }

    /** Lines that hold code: not blank, not inside a comment, not only a comment. */
    static int codeLines(List<String> lines) {
        int code = 0;
        boolean inComment = false;
        for (String line : lines) {
            String s = line.strip();
            if (inComment) {
                inComment = !s.contains("*/");
            } else if (s.startsWith("/*")) {
                inComment = !s.contains("*/");
            } else if (!s.isEmpty() && !s.startsWith("//")) {
                code++;
            }
        }
        return code;
    }
}
