package dev.holdfast.docs;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Conventions every module of the library keeps: every package has a {@code package-info.java} that
 * describes it in javadoc and declares its nullness ({@code @NullMarked}: what may be null says
 * {@code @Nullable}); and one rule for bad arguments: every invalid argument, null included, is an
 * {@link IllegalArgumentException}, never a {@link NullPointerException}.
 */
class LibraryConventionsTest {

    private static final Path ROOT = RepositoryRoot.path();

    @Test
    void aNullArgumentIsAnIllegalArgumentLikeAnyOtherBadArgument() throws IOException {
        List<String> problems = new ArrayList<>();
        for (Path file : librarySources()) {
            List<String> lines = Files.readAllLines(file);
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i);
                if (line.contains("requireNonNull(") || line.contains("new NullPointerException(")) {
                    problems.add(ROOT.relativize(file) + ":" + (i + 1) + ": " + line.strip());
                }
            }
        }
        assertThat(problems).as("use dev.holdfast.internal.Arguments.notNull").isEmpty();
    }

    @Test
    void formerlyNullPointerSitesNowSayIllegalArgumentWithTheParameterName() {
        byte[] key = new byte[32];
        List<org.assertj.core.api.ThrowableAssert.ThrowingCallable> calls = List.of(
                () -> new dev.holdfast.jdbc.SchemaInstaller(null, dev.holdfast.jdbc.dialect.Dialect.H2),
                () -> dev.holdfast.optimistic.VersionedTable.builder("orders")
                        .dialect(null)
                        .build(),
                () -> dev.holdfast.optimistic.VersionedTable.builder("orders")
                        .dialect(dev.holdfast.jdbc.dialect.Dialect.H2)
                        .build()
                        .row(null),
                () -> dev.holdfast.optimistic.offline.OptimisticOfflineLock.builder(key)
                        .table(null),
                () -> dev.holdfast.pessimistic.PessimisticLocks.of((dev.holdfast.jdbc.dialect.Dialect) null),
                () -> dev.holdfast.jdbc.dialect.Dialect.fromProductName(null));
        for (var call : calls) {
            org.assertj.core.api.Assertions.assertThatThrownBy(call)
                    .isExactlyInstanceOf(IllegalArgumentException.class)
                    .hasMessageEndingWith("must not be null");
        }
    }

    private static List<Path> librarySources() throws IOException {
        List<Path> sources = new ArrayList<>();
        try (Stream<Path> modules = Files.list(ROOT)) {
            for (Path module : modules.filter(m -> m.getFileName().toString().startsWith("holdfast-"))
                    .toList()) {
                Path dir = module.resolve("src/main/java");
                if (Files.isDirectory(dir)) {
                    try (Stream<Path> files = Files.walk(dir)) {
                        files.filter(f -> f.toString().endsWith(".java")).forEach(sources::add);
                    }
                }
            }
        }
        return sources;
    }

    @Test
    void everyLibraryPackageIsDescribedAndNullMarked() throws IOException {
        Set<Path> packages = new TreeSet<>();
        try (Stream<Path> modules = Files.list(ROOT)) {
            for (Path module : modules.filter(m -> m.getFileName().toString().startsWith("holdfast-"))
                    .toList()) {
                Path sources = module.resolve("src/main/java");
                if (Files.isDirectory(sources)) {
                    try (Stream<Path> files = Files.walk(sources)) {
                        files.filter(f -> f.toString().endsWith(".java"))
                                .map(Path::getParent)
                                .forEach(packages::add);
                    }
                }
            }
        }
        List<String> problems = new ArrayList<>();
        for (Path dir : packages) {
            Path info = dir.resolve("package-info.java");
            String where = ROOT.relativize(dir).toString();
            if (!Files.exists(info)) {
                problems.add(where + ": no package-info.java");
                continue;
            }
            String text = Files.readString(info);
            if (!text.contains("@NullMarked")) {
                problems.add(where + ": package-info.java is not @NullMarked");
            }
            if (!text.strip().startsWith("/**")) {
                problems.add(where + ": package-info.java has no javadoc describing the package");
            }
        }
        assertThat(packages).as("library packages found").hasSizeGreaterThanOrEqualTo(10);
        assertThat(problems).isEmpty();
    }
}
