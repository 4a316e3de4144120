package dev.holdfast.architecture;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The modules of the reactor and their compiled main classes, read from each module's
 * {@code target/classes} so that every class is known by the module it belongs to (packages such as
 * {@code dev.holdfast.lease} are split between a library and the benchmarks).
 */
final class Reactor {

    /** What a module is, for the rules: libraries are published, examples and benchmarks use them. */
    enum Kind {
        LIBRARY,
        EXAMPLE,
        BENCHMARK
    }

    /** A module: its folder under the root, and its kind. */
    record Module(String dir, Kind kind) {

        Path classes() {
            return ROOT.resolve(dir).resolve("target/classes");
        }

        @Override
        public String toString() {
            return dir;
        }
    }

    static final Path ROOT =
            Path.of(System.getProperty("holdfast.root", "..")).toAbsolutePath().normalize();

    static final List<Module> MODULES = List.of(
            new Module("holdfast-core", Kind.LIBRARY),
            new Module("holdfast-test-databases", Kind.LIBRARY),
            new Module("holdfast-testing", Kind.LIBRARY),
            new Module("holdfast-hibernate", Kind.LIBRARY),
            new Module("holdfast-shedlock", Kind.LIBRARY),
            new Module("holdfast-spring-boot-starter", Kind.LIBRARY),
            new Module("examples/shop", Kind.EXAMPLE),
            new Module("examples/quickstart", Kind.EXAMPLE),
            new Module("benchmarks", Kind.BENCHMARK));

    private static JavaClasses classes;

    private Reactor() {}

    /** The main classes of every module (JMH's generated classes aside), imported once per run. */
    static synchronized JavaClasses mainClasses() {
        if (classes == null) {
            List<Path> dirs = new ArrayList<>();
            for (Module m : MODULES) {
                if (!Files.isDirectory(m.classes())) {
                    throw new IllegalStateException(m.classes() + " is missing: build the whole reactor"
                            + " (mvn -B verify), or this module with -am");
                }
                dirs.add(m.classes());
            }
            classes = new ClassFileImporter()
                    .withImportOption(location -> !location.contains("/jmh_generated/"))
                    .importPaths(dirs);
        }
        return classes;
    }

    /** The module a class was compiled in; empty for a class from outside the reactor. */
    static Optional<Module> moduleOf(JavaClass c) {
        Optional<String> path = c.getSource().map(s -> s.getUri().getPath());
        if (path.isEmpty()) {
            return Optional.empty();
        }
        for (Module m : MODULES) {
            if (path.get().startsWith(m.classes().toUri().getPath())) {
                return Optional.of(m);
            }
        }
        return Optional.empty();
    }

    /** The top-level class a class is part of (itself, or the class it is nested, local or anonymous in). */
    static String topLevelName(JavaClass c) {
        String name = c.getName();
        int dollar = name.indexOf('$');
        return dollar < 0 ? name : name.substring(0, dollar);
    }

    /** The class a dependency really names: an array's element type, else the class itself. */
    static JavaClass named(JavaClass target) {
        return target.isArray() ? target.getBaseComponentType() : target;
    }

    static boolean isInternalPackage(String packageName) {
        return packageName.equals("internal")
                || packageName.endsWith(".internal")
                || packageName.contains(".internal.");
    }

    /**
     * Whether a class is public API: public, nested only in public classes, in a package that is not
     * internal.
     */
    static boolean isPublicApi(JavaClass c) {
        if (isInternalPackage(c.getPackageName())) {
            return false;
        }
        for (Optional<JavaClass> k = Optional.of(c); k.isPresent(); k = k.get().getEnclosingClass()) {
            if (!k.get().getModifiers().contains(JavaModifier.PUBLIC)) {
                return false;
            }
        }
        return true;
    }
}
