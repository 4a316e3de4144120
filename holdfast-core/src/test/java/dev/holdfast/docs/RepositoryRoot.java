package dev.holdfast.docs;

import java.nio.file.Files;
import java.nio.file.Path;

/** The checkout's root folder (the one with {@code .ci/}), found from the module a test runs in. */
final class RepositoryRoot {

    private RepositoryRoot() {}

    static Path path() {
        Path start = Path.of("").toAbsolutePath();
        for (Path dir = start; dir != null; dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve(".ci"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no repository root (a folder with .ci/) above " + start);
    }
}
