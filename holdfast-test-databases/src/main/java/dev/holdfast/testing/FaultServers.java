package dev.holdfast.testing;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestTemplateInvocationContext;
import org.junit.jupiter.api.extension.TestTemplateInvocationContextProvider;

import java.io.IOException;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Stream;

/** The extension behind {@code @FaultTest}: one invocation per fault server, each under a machine-wide lock. */
final class FaultServers implements TestTemplateInvocationContextProvider {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(FaultServers.class);

    @Override
    public boolean supportsTestTemplate(ExtensionContext context) {
        return MatrixAnnotation.registers(context.getTestMethod(), FaultServers.class);
    }

    @Override
    public Stream<TestTemplateInvocationContext> provideTestTemplateInvocationContexts(ExtensionContext context) {
        TestDatabase.Kind[] only = MatrixAnnotation.only(context, FaultServers.class);
        Set<TestDatabase.Kind> wanted = only.length == 0
                ? EnumSet.of(TestDatabase.Kind.POSTGRESQL, TestDatabase.Kind.MARIADB)
                : EnumSet.copyOf(Arrays.asList(only));
        wanted.remove(TestDatabase.Kind.H2);
        // Fault servers are reached directly: an entry through a pooler selects none.
        return DatabaseMatrix.selected(context).stream()
                .filter(entry -> entry == entry.kind().direct() && wanted.contains(entry.kind()))
                .map(entry -> invocation(entry.kind(), context));
    }

    /** A test for databases that no selected entry reaches runs nowhere, which is no error. */
    @Override
    public boolean mayReturnZeroTestTemplateInvocationContexts(ExtensionContext context) {
        return true;
    }

    private TestTemplateInvocationContext invocation(TestDatabase.Kind kind, ExtensionContext context) {
        boolean ci = DatabaseMatrix.onCi(context);
        Server server = context.getRoot()
                .getStore(NAMESPACE)
                .computeIfAbsent(
                        kind, k -> new Server(k, name -> DatabaseMatrix.setting(context, name), ci), Server.class);
        return new MatrixInvocation<>(
                kind.id(),
                context,
                FaultDatabase.class,
                server.unreachable,
                ci,
                "CI=true: the fault servers must run; start them with scripts/fault-servers.sh up",
                new MatrixInvocation.Lifecycle<>() {
                    private @Nullable MachineLock lock;

                    /** Under a machine-wide lock: one fault test at a time restarts or stalls a server. */
                    @Override
                    public FaultDatabase open() throws Exception {
                        lock = MachineLock.take("fault-servers");
                        try {
                            FaultDatabase database = new FaultDatabase(kind, server.url, server.user, server.password);
                            database.awaitReachable();
                            return database;
                        } catch (Exception | Error e) {
                            // close(..) runs only for an opened database: free the machine-wide lock here
                            unlock();
                            throw e;
                        }
                    }

                    @Override
                    public void close(FaultDatabase database) throws Exception {
                        try {
                            database.cleanUp();
                        } finally {
                            unlock();
                        }
                    }

                    private void unlock() throws IOException {
                        MachineLock held = lock;
                        lock = null;
                        if (held != null) {
                            held.close();
                        }
                    }
                });
    }

    /** One fault server: where it is, and whether it answered when the run began. */
    static final class Server {
        final String url;
        final String user;
        final String password;
        final @Nullable String unreachable;

        Server(TestDatabase.Kind kind, java.util.function.UnaryOperator<String> settings, boolean ci) {
            String prefix = "HOLDFAST_FAULT_" + kind.name() + "_";
            this.url = or(settings.apply(prefix + "URL"), FaultDatabase.defaultUrl(kind));
            this.user = or(settings.apply(prefix + "USER"), kind == TestDatabase.Kind.POSTGRESQL ? "postgres" : "root");
            this.password = or(settings.apply(prefix + "PASSWORD"), "");
            this.unreachable = MatrixInvocation.probe(
                    kind.id() + " fault server",
                    url,
                    user,
                    password,
                    ci,
                    "Its fault tests are SKIPPED (start it: scripts/fault-servers.sh up).");
        }

        private static String or(String value, String fallback) {
            return value == null ? fallback : value;
        }
    }
}
