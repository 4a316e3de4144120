package dev.holdfast.testing;

import com.zaxxer.hikari.HikariDataSource;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestTemplateInvocationContext;
import org.junit.jupiter.api.extension.TestTemplateInvocationContextProvider;

import java.sql.SQLException;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The extension behind {@code @DatabaseTest}. Pools are created once per test run (JVM) and closed
 * at its end. {@code HOLDFAST_TEST_DATABASES} (comma-separated ids, default all) selects databases;
 * {@code CI=true} turns an unreachable database into a failure. Every setting is read from a JUnit
 * configuration parameter of the same name first (e.g. {@code HOLDFAST_POSTGRESQL_URL}, {@code CI}),
 * then from the environment.
 */
final class DatabaseMatrix implements TestTemplateInvocationContextProvider {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(DatabaseMatrix.class);

    @Override
    public boolean supportsTestTemplate(ExtensionContext context) {
        return MatrixAnnotation.registers(context.getTestMethod(), DatabaseMatrix.class);
    }

    @Override
    public Stream<TestTemplateInvocationContext> provideTestTemplateInvocationContexts(ExtensionContext context) {
        TestDatabase.Kind[] only = MatrixAnnotation.only(context, DatabaseMatrix.class);
        Set<TestDatabase.Kind> wanted = only.length == 0
                ? EnumSet.allOf(TestDatabase.Kind.class)
                : EnumSet.copyOf(Arrays.asList(only));
        return selected(context).stream()
                .filter(wanted::contains)
                .map(kind -> invocation(kind, context));
    }

    /** A setting from the JUnit configuration, else the environment. */
    static String setting(ExtensionContext context, String name) {
        return context.getConfigurationParameter(name).orElseGet(() -> System.getenv(name));
    }

    static List<TestDatabase.Kind> selected(ExtensionContext context) {
        String env = setting(context, "HOLDFAST_TEST_DATABASES");
        if (env == null || env.isBlank()) {
            return List.of(TestDatabase.Kind.values());
        }
        return Arrays.stream(env.split(","))
                .map(s -> TestDatabase.Kind.valueOf(s.strip().toUpperCase(Locale.ROOT)))
                .collect(Collectors.toList());
    }

    static boolean onCi(ExtensionContext context) {
        return "true".equalsIgnoreCase(setting(context, "CI"));
    }

    private TestTemplateInvocationContext invocation(TestDatabase.Kind kind, ExtensionContext context) {
        boolean ci = onCi(context);
        Server server = context.getRoot().getStore(NAMESPACE)
                .computeIfAbsent(kind, k -> new Server(k, name -> setting(context, name), ci), Server.class);
        return new MatrixInvocation<>(kind, context, TestDatabase.class, server.unreachable, ci,
                "CI=true: every database of the matrix must be reachable", new MatrixInvocation.Lifecycle<>() {
                    @Override
                    public TestDatabase open() {
                        // opened only when the server was reachable, so its pool exists
                        return new TestDatabase(kind, opened(server.pool));
                    }

                    @Override
                    public void close(TestDatabase database) throws SQLException {
                        database.cleanUp();
                    }
                });
    }

    /** One database server for the whole run: reachability checked once, one shared pool. */
    static final class Server implements AutoCloseable {
        final @Nullable String unreachable;
        final @Nullable HikariDataSource pool;

        Server(TestDatabase.Kind kind, java.util.function.UnaryOperator<String> settings, boolean ci) {
            String url = kind.setting("URL", kind.url(), settings);
            String user = kind.setting("USER", kind.user(), settings);
            String password = kind.setting("PASSWORD", kind.password(), settings);
            this.unreachable = MatrixInvocation.probe(kind.id(), url, user, password, ci, "Its tests are SKIPPED.");
            this.pool = unreachable == null
                    ? TestDatabase.pool(url, user, password, "holdfast-test-" + kind.id(), 20)
                    : null;
        }

        @Override
        public void close() {
            if (pool != null) {
                pool.close();
            }
        }
    }

    /** A resource this extension opened before it is asked for. */
    private static <T> T opened(@Nullable T resource) {
        if (resource == null) {
            throw new IllegalStateException("opened before it is resolved, yet missing");
        }
        return resource;
    }
}
