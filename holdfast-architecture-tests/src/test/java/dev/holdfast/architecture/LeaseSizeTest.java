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
 * its sub-packages, in any library module, is longer than 500 lines, and {@code LeaseService.java}
 * no longer than 300.
 */
class LeaseSizeTest {

    static final int MAX_LINES = 500;
    static final Map<String, Integer> MAX_LINES_OF = Map.of("LeaseService.java", 300);

    /**
     * Files over their limit, with their length when they were listed: none since the redesign of
     * issue 27. A listed file may not grow; once it is within its limit (or gone), delete its entry.
     * {@code LeaseService.java}: three builder options arrived at once (failoverGrace, onGrant,
     * listenerDataSource); the builder's state belongs in an internal options object.
     */
    static final Map<String, Integer> OVERSIZED_TODAY = Map.of(
            "holdfast-core/src/main/java/dev/holdfast/lease/LeaseService.java", 312);

    @Test
    void leaseFilesStayWithinTheirLimits() throws IOException {
        Map<String, Integer> lengths = new TreeMap<>();
        for (Module m : Reactor.MODULES) {
            Path lease = Reactor.ROOT.resolve(m.dir()).resolve("src/main/java/dev/holdfast/lease");
            if (m.kind() != Kind.LIBRARY || !Files.isDirectory(lease)) {
                continue;
            }
            try (Stream<Path> files = Files.walk(lease)) {
                for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                    lengths.put(Reactor.ROOT.relativize(file).toString().replace('\\', '/'), lines(file));
                }
            }
        }
        assertThat(lengths).as("lease sources found").isNotEmpty();

        List<String> problems = new ArrayList<>();
        lengths.forEach((file, lines) -> {
            int limit = limitOf(file);
            Integer today = OVERSIZED_TODAY.get(file);
            if (today == null && lines > limit) {
                problems.add(file + " has " + lines + " lines, more than " + limit);
            } else if (today != null && lines > today) {
                problems.add(file + " grew to " + lines + " lines from " + today + "; it must shrink to " + limit);
            } else if (today != null && lines <= limit) {
                problems.add(file + " is within its limit (" + lines + " lines): delete it from OVERSIZED_TODAY");
            }
        });
        OVERSIZED_TODAY.keySet().stream().filter(f -> !lengths.containsKey(f)).sorted()
                .forEach(f -> problems.add(f + " is gone: delete it from OVERSIZED_TODAY"));
        assertThat(problems).as("lease file lengths").isEmpty();
    }

    private static int limitOf(String file) {
        String name = file.substring(file.lastIndexOf('/') + 1);
        return MAX_LINES_OF.getOrDefault(name, MAX_LINES);
    }

    private static int lines(Path file) throws IOException {
        try (Stream<String> lines = Files.lines(file)) {
            return (int) lines.count();
        }
    }
}
