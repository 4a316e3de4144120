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
 * at its end. {@code HOLDFAST_TEST_DATABASES} (comma-separated entry ids, default
 * {@code h2,postgresql,mariadb}) selects the entries ({@link TestDatabase.Entry});
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
        Set<TestDatabase.Kind> wanted =
                only.length == 0 ? EnumSet.allOf(TestDatabase.Kind.class) : EnumSet.copyOf(Arrays.asList(only));
        return selected(context).stream()
                .filter(entry -> wanted.contains(entry.kind()))
                .map(entry -> invocation(entry, context));
    }

    /** A test for databases that no selected entry reaches runs nowhere, which is no error. */
    @Override
    public boolean mayReturnZeroTestTemplateInvocationContexts(ExtensionContext context) {
        return true;
    }

    /** A setting from the JUnit configuration, else the environment. */
    static String setting(ExtensionContext context, String name) {
        return context.getConfigurationParameter(name).orElseGet(() -> System.getenv(name));
    }

    /** The entries {@code HOLDFAST_TEST_DATABASES} lists, by default {@link #DEFAULT_ENTRIES}. */
    static List<TestDatabase.Entry> selected(ExtensionContext context) {
        String env = setting(context, "HOLDFAST_TEST_DATABASES");
        if (env == null || env.isBlank()) {
            return DEFAULT_ENTRIES;
        }
        return Arrays.stream(env.split(",")).map(s -> entry(s.strip())).collect(Collectors.toList());
    }

    /** The entries that run when {@code HOLDFAST_TEST_DATABASES} is not set: each database directly. */
    static final List<TestDatabase.Entry> DEFAULT_ENTRIES =
            List.of(TestDatabase.Entry.H2, TestDatabase.Entry.POSTGRESQL, TestDatabase.Entry.MARIADB);

    private static TestDatabase.Entry entry(String id) {
        try {
            return TestDatabase.Entry.valueOf(id.toUpperCase(Locale.ROOT).replace('-', '_'));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "HOLDFAST_TEST_DATABASES names no entry '" + id + "'; known: "
                            + Arrays.stream(TestDatabase.Entry.values())
                                    .map(TestDatabase.Entry::id)
                                    .collect(Collectors.joining(",")),
                    e);
        }
    }

    static boolean onCi(ExtensionContext context) {
        return "true".equalsIgnoreCase(setting(context, "CI"));
    }

    private TestTemplateInvocationContext invocation(TestDatabase.Entry entry, ExtensionContext context) {
        boolean ci = onCi(context);
        Server server = context.getRoot()
                .getStore(NAMESPACE)
                .computeIfAbsent(entry, k -> new Server(entry, name -> setting(context, name), ci), Server.class);
        return new MatrixInvocation<>(
                entry.id(),
                context,
                TestDatabase.class,
                server.unreachable,
                ci,
                "CI=true: every database of the matrix must be reachable",
                new MatrixInvocation.Lifecycle<>() {
                    @Override
                    public TestDatabase open() {
                        // opened only when the server was reachable, so its pool exists
                        return new TestDatabase(entry, opened(server.pool));
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

        Server(TestDatabase.Entry entry, java.util.function.UnaryOperator<String> settings, boolean ci) {
            String url = entry.setting("URL", entry.url(), settings);
            String user = entry.setting("USER", entry.user(), settings);
            String password = entry.setting("PASSWORD", entry.password(), settings);
            String unreachable = MatrixInvocation.probe(
                    entry.id(), url, user, password, ci, (entry.startHint() + " Its tests are SKIPPED.").strip());
            this.unreachable = unreachable == null || entry.startHint().isEmpty()
                    ? unreachable
                    : unreachable + ". " + entry.startHint();
            this.pool = unreachable == null
                    ? TestDatabase.pool(url, user, password, "holdfast-test-" + entry.id(), 20)
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
