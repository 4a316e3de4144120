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
 * Every package of the library's modules has a {@code package-info.java} that describes it in javadoc
 * and declares its nullness ({@code @NullMarked}: what may be null says {@code @Nullable}).
 */
class PackageInfoTest {

    private static final Path ROOT = RepositoryRoot.path();

    @Test
    void everyLibraryPackageIsDescribedAndNullMarked() throws IOException {
        Set<Path> packages = new TreeSet<>();
        try (Stream<Path> modules = Files.list(ROOT)) {
            for (Path module : modules.filter(m -> m.getFileName().toString().startsWith("holdfast-")).toList()) {
                Path sources = module.resolve("src/main/java");
                if (Files.isDirectory(sources)) {
                    try (Stream<Path> files = Files.walk(sources)) {
                        files.filter(f -> f.toString().endsWith(".java")).map(Path::getParent).forEach(packages::add);
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
