package dev.holdfast.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Compares rendered text with a file kept in the repository ({@code src/test/resources/statements/}),
 * so that a reviewer reads each database's SQL in one place and sees every change to it in a diff.
 * Run the tests with {@code -Dholdfast.golden.write=true} to rewrite the files after an intended change.
 */
public final class Golden {

    /** The core's folder, also when its tests run from another module's folder (holdfast-ha-tests runs its test jar). */
    private static final Path DIR = Files.isDirectory(Path.of("src/test/resources/statements"))
            ? Path.of("src/test/resources/statements")
            : Path.of("..", "holdfast-core", "src", "test", "resources", "statements");

    private Golden() {}

    public static void assertMatches(String file, String rendered) {
        Path path = DIR.resolve(file);
        try {
            if (Boolean.getBoolean("holdfast.golden.write")) {
                Files.createDirectories(DIR);
                Files.writeString(path, rendered);
            }
            assertThat(path)
                    .as("golden file %s (write it with -Dholdfast.golden.write=true)", path)
                    .exists();
            assertThat(rendered)
                    .as(
                            "the SQL of %s changed: review it, then rewrite the file with"
                                    + " -Dholdfast.golden.write=true",
                            path)
                    .isEqualTo(Files.readString(path));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One statement under a heading, as the golden files list them. */
    public static String section(String title, String sql) {
        return "-- " + title + "\n" + sql + ";\n\n";
    }
}
