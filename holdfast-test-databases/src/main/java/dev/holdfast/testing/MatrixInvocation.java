package dev.holdfast.testing;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.Extension;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestTemplateInvocationContext;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.List;

/**
 * One run of a matrix test on one server: skipped if the server was unreachable (a failure with
 * {@code CI=true}), else the test's database parameter opened before and closed after the test.
 *
 * @param <D> the parameter type the test declares ({@link TestDatabase}, {@link FaultDatabase})
 */
final class MatrixInvocation<D> implements TestTemplateInvocationContext {

    /** Opens the test's database before it runs and closes it after. */
    interface Lifecycle<D> {
        D open() throws Exception;

        void close(D database) throws Exception;
    }

    private final String displayName;
    private final Class<D> type;
    private final @Nullable String unreachable;
    private final boolean ci;
    private final String ciHint;
    private final Lifecycle<D> lifecycle;
    private @Nullable D database;

    /**
     * @param unreachable why the server could not be reached when the run began, or null
     * @param ciHint      what to do about an unreachable server, said when {@code CI=true} fails the test
     */
    MatrixInvocation(
            String id,
            ExtensionContext context,
            Class<D> type,
            @Nullable String unreachable,
            boolean ci,
            String ciHint,
            Lifecycle<D> lifecycle) {
        this.displayName = "[" + id + "] " + context.getRequiredTestMethod().getName();
        this.type = type;
        this.unreachable = unreachable;
        this.ci = ci;
        this.ciHint = ciHint;
        this.lifecycle = lifecycle;
    }

    /**
     * Whether a new connection to {@code url} works: null if so, else why not. Unless on CI, an
     * unreachable server is announced loudly, since its tests are then skipped.
     */
    static @Nullable String probe(String what, String url, String user, String password, boolean ci, String skipHint) {
        DriverManager.setLoginTimeout(5);
        try (Connection c = DriverManager.getConnection(url, user, password)) {
            c.isValid(5);
            return null;
        } catch (SQLException e) {
            String unreachable = what + " is unreachable at " + url + ": " + e.getMessage();
            if (!ci) {
                System.err.println("\n**********************************************************************\n"
                        + "* HOLDFAST: " + unreachable + "\n"
                        + "* " + skipHint + " With CI=true they fail instead.\n"
                        + "**********************************************************************\n");
            }
            return unreachable;
        }
    }

    @Override
    public String getDisplayName(int invocationIndex) {
        return displayName;
    }

    @Override
    public List<Extension> getAdditionalExtensions() {
        return List.of(
                (ExecutionCondition) ctx -> unreachable == null || ci
                        ? ConditionEvaluationResult.enabled("reachable")
                        : ConditionEvaluationResult.disabled("SKIPPED: " + unreachable),
                (BeforeEachCallback) ctx -> {
                    if (unreachable != null) {
                        throw new AssertionError(unreachable + " (" + ciHint + ")");
                    }
                    database = lifecycle.open();
                },
                (AfterEachCallback) ctx -> {
                    if (database != null) {
                        lifecycle.close(database);
                    }
                },
                new ParameterResolver() {
                    @Override
                    public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
                        return p.getParameter().getType() == type;
                    }

                    @Override
                    public Object resolveParameter(ParameterContext p, ExtensionContext e) {
                        // the before-each callback above opened it
                        return opened(database);
                    }
                });
    }

    /** A resource this extension opened before it is asked for. */
    private static <T> T opened(@Nullable T resource) {
        if (resource == null) {
            throw new IllegalStateException("opened before it is resolved, yet missing");
        }
        return resource;
    }
}
