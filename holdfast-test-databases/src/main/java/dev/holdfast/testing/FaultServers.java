package dev.holdfast.testing;

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

import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/** The extension behind {@link FaultTest}: one invocation per fault server, each under a machine-wide lock. */
final class FaultServers implements TestTemplateInvocationContextProvider {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(FaultServers.class);
    private static final Path LOCK_FILE = Path.of(System.getProperty("java.io.tmpdir"), "holdfast-fault-servers.lock");

    @Override
    public boolean supportsTestTemplate(ExtensionContext context) {
        return AnnotationSupport.isAnnotated(context.getTestMethod(), FaultTest.class);
    }

    @Override
    public Stream<TestTemplateInvocationContext> provideTestTemplateInvocationContexts(ExtensionContext context) {
        FaultTest annotation = AnnotationSupport.findAnnotation(context.getRequiredTestMethod(), FaultTest.class)
                .orElseThrow();
        Set<TestDatabase.Kind> wanted = annotation.only().length == 0
                ? EnumSet.of(TestDatabase.Kind.POSTGRESQL, TestDatabase.Kind.MARIADB)
                : EnumSet.copyOf(Arrays.asList(annotation.only()));
        wanted.remove(TestDatabase.Kind.H2);
        return DatabaseMatrix.selected(context).stream()
                .filter(wanted::contains)
                .map(kind -> invocation(kind, context));
    }

    private TestTemplateInvocationContext invocation(TestDatabase.Kind kind, ExtensionContext context) {
        boolean ci = DatabaseMatrix.onCi(context);
        Server server = context.getRoot().getStore(NAMESPACE)
                .computeIfAbsent(kind, k -> new Server(k, name -> DatabaseMatrix.setting(context, name), ci), Server.class);
        return new TestTemplateInvocationContext() {
            private FaultDatabase database;
            private FileChannel lockChannel;
            private FileLock lock;

            @Override
            public String getDisplayName(int invocationIndex) {
                return "[" + kind.id() + "] " + context.getRequiredTestMethod().getName();
            }

            @Override
            public List<Extension> getAdditionalExtensions() {
                return List.of(
                        (ExecutionCondition) ctx -> {
                            if (server.unreachable == null || ci) {
                                return ConditionEvaluationResult.enabled(kind.id() + " fault server reachable");
                            }
                            return ConditionEvaluationResult.disabled("SKIPPED: " + server.unreachable);
                        },
                        (BeforeEachCallback) ctx -> {
                            if (server.unreachable != null) {
                                throw new AssertionError(server.unreachable
                                        + " (CI=true: the fault servers must run; start them with scripts/fault-servers.sh up)");
                            }
                            lockChannel = FileChannel.open(LOCK_FILE, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                            lock = lockChannel.lock();
                            database = new FaultDatabase(kind, server.url, server.user, server.password);
                            database.awaitReachable();
                        },
                        (AfterEachCallback) ctx -> {
                            try {
                                if (database != null) {
                                    database.cleanUp();
                                }
                            } finally {
                                if (lock != null) {
                                    lock.release();
                                    lockChannel.close();
                                }
                            }
                        },
                        new ParameterResolver() {
                            @Override
                            public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
                                return p.getParameter().getType() == FaultDatabase.class;
                            }

                            @Override
                            public Object resolveParameter(ParameterContext p, ExtensionContext e) {
                                return database;
                            }
                        });
            }
        };
    }

    /** One fault server: where it is, and whether it answered when the run began. */
    static final class Server {
        final String url;
        final String user;
        final String password;
        final String unreachable;

        Server(TestDatabase.Kind kind, java.util.function.UnaryOperator<String> settings, boolean ci) {
            String prefix = "HOLDFAST_FAULT_" + kind.name() + "_";
            this.url = or(settings.apply(prefix + "URL"), FaultDatabase.defaultUrl(kind));
            this.user = or(settings.apply(prefix + "USER"), kind == TestDatabase.Kind.POSTGRESQL ? "postgres" : "root");
            this.password = or(settings.apply(prefix + "PASSWORD"), "");
            this.unreachable = probe(kind, url, user, password);
            if (unreachable != null && !ci) {
                System.err.println("\n**********************************************************************\n"
                        + "* HOLDFAST: " + unreachable + "\n"
                        + "* Its fault tests are SKIPPED (start it: scripts/fault-servers.sh up). With CI=true they fail.\n"
                        + "**********************************************************************\n");
            }
        }

        private static String or(String value, String fallback) {
            return value == null ? fallback : value;
        }

        private static String probe(TestDatabase.Kind kind, String url, String user, String password) {
            DriverManager.setLoginTimeout(5);
            try (Connection c = DriverManager.getConnection(url, user, password)) {
                c.isValid(5);
                return null;
            } catch (SQLException e) {
                return kind.id() + " fault server is unreachable at " + url + ": " + e.getMessage();
            }
        }
    }
}
