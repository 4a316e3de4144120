package dev.holdfast.testing;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.Extension;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestTemplateInvocationContext;
import org.junit.jupiter.api.extension.TestTemplateInvocationContextProvider;
import org.junit.platform.commons.support.AnnotationSupport;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The extension behind {@link DatabaseTest}. Pools are created once per test run (JVM) and closed
 * at its end. {@code HOLDFAST_TEST_DATABASES} (comma-separated ids, default all) selects databases;
 * {@code CI=true} turns an unreachable database into a failure. Every setting is read from a JUnit
 * configuration parameter of the same name first (e.g. {@code HOLDFAST_POSTGRESQL_URL}, {@code CI}),
 * then from the environment.
 */
final class DatabaseMatrix implements TestTemplateInvocationContextProvider {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(DatabaseMatrix.class);

    @Override
    public boolean supportsTestTemplate(ExtensionContext context) {
        return AnnotationSupport.isAnnotated(context.getTestMethod(), DatabaseTest.class);
    }

    @Override
    public Stream<TestTemplateInvocationContext> provideTestTemplateInvocationContexts(ExtensionContext context) {
        DatabaseTest annotation = AnnotationSupport.findAnnotation(context.getRequiredTestMethod(), DatabaseTest.class)
                .orElseThrow();
        Set<TestDatabase.Kind> wanted = annotation.only().length == 0
                ? EnumSet.allOf(TestDatabase.Kind.class)
                : EnumSet.copyOf(Arrays.asList(annotation.only()));
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
        return new TestTemplateInvocationContext() {
            private TestDatabase database;

            @Override
            public String getDisplayName(int invocationIndex) {
                return "[" + kind.id() + "] " + context.getRequiredTestMethod().getName();
            }

            @Override
            public List<Extension> getAdditionalExtensions() {
                return List.of(
                        (ExecutionCondition) ctx -> {
                            if (server.unreachable == null || ci) {
                                return ConditionEvaluationResult.enabled(kind.id() + " reachable");
                            }
                            return ConditionEvaluationResult.disabled("SKIPPED: " + server.unreachable);
                        },
                        (BeforeEachCallback) ctx -> {
                            if (server.unreachable != null) {
                                throw new AssertionError(server.unreachable
                                        + " (CI=true: every database of the matrix must be reachable)");
                            }
                            database = new TestDatabase(kind, server.pool);
                        },
                        (AfterEachCallback) ctx -> {
                            if (database != null) {
                                database.cleanUp();
                            }
                        },
                        new ParameterResolver() {
                            @Override
                            public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
                                return p.getParameter().getType() == TestDatabase.class;
                            }

                            @Override
                            public Object resolveParameter(ParameterContext p, ExtensionContext e) {
                                return database;
                            }
                        });
            }
        };
    }

    /** One database server for the whole run: reachability checked once, one shared pool. */
    static final class Server implements AutoCloseable {
        final String unreachable;
        final HikariDataSource pool;

        Server(TestDatabase.Kind kind, java.util.function.UnaryOperator<String> settings, boolean ci) {
            String url = kind.setting("URL", kind.url(), settings);
            String user = kind.setting("USER", kind.user(), settings);
            String password = kind.setting("PASSWORD", kind.password(), settings);
            this.unreachable = probe(kind, url, user, password);
            this.pool = unreachable == null
                    ? TestDatabase.pool(url, user, password, "holdfast-test-" + kind.id(), 20)
                    : null;
            if (unreachable != null && !ci) {
                System.err.println("\n**********************************************************************\n"
                        + "* HOLDFAST: " + unreachable + "\n"
                        + "* Its tests are SKIPPED. With CI=true they fail instead.\n"
                        + "**********************************************************************\n");
            }
        }

        private static String probe(TestDatabase.Kind kind, String url, String user, String password) {
            DriverManager.setLoginTimeout(5);
            try (Connection c = DriverManager.getConnection(url, user, password)) {
                c.isValid(5);
                return null;
            } catch (SQLException e) {
                return kind.id() + " is unreachable at " + url + ": " + e.getMessage();
            }
        }

        @Override
        public void close() {
            if (pool != null) {
                pool.close();
            }
        }
    }
}
