package dev.holdfast;

import dev.holdfast.testing.MachineLock;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.fail;

/**
 * The PostgreSQL primary/standby pair of the failover tests, driven by {@code scripts/pg-replica.sh}:
 * a test that cannot have it fails on CI and is skipped elsewhere.
 */
public final class PgReplicaPair {

    private PgReplicaPair() {}

    /**
     * {@code @ExtendWith(PgReplicaPair.Exclusive.class)}: the class has the pair to itself, under a
     * machine-wide lock (test classes run in parallel forks, and each brings the pair up and fails it
     * over). Taken before the class's {@code @BeforeAll} methods, given back after its {@code @AfterAll} ones.
     */
    public static final class Exclusive implements BeforeAllCallback, AfterAllCallback {
        private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(Exclusive.class);

        @Override
        public void beforeAll(ExtensionContext context) throws IOException {
            context.getStore(NAMESPACE).put("lock", MachineLock.take("replica-pair"));
        }

        @Override
        public void afterAll(ExtensionContext context) throws IOException {
            MachineLock lock = context.getStore(NAMESPACE).remove("lock", MachineLock.class);
            if (lock != null) {
                lock.close();
            }
        }
    }

    /** The multi-host URL that reaches whichever server of the pair is primary ({@code HOLDFAST_REPLICA_URL}). */
    public static String url() {
        String url = System.getenv("HOLDFAST_REPLICA_URL");
        return url != null ? url : "jdbc:postgresql://127.0.0.1:5434,127.0.0.1:5435/test?targetServerType=primary";
    }

    /**
     * {@code url} for the first connection after a pair or cluster came up: without the driver's host
     * status cache. pgjdbc remembers each host's role for {@code hostRecheckSeconds} (10 s), for the
     * whole JVM; right after a test that failed over, it still takes the promoted standby for the
     * primary and the stopped primary for down, tries only the former, and finds no primary (seen on
     * CI: the second {@code LeaseFastFailoverTest} right after the first). This connection tries every
     * host and leaves the cache right for the pools that follow.
     */
    public static String withoutHostCache(String url) {
        return url + (url.contains("?") ? "&" : "?") + "hostRecheckSeconds=0";
    }

    /** The standby alone ({@code HOLDFAST_REPLICA_STANDBY_PORT}). */
    public static String standbyUrl() {
        String port = System.getenv("HOLDFAST_REPLICA_STANDBY_PORT");
        return "jdbc:postgresql://127.0.0.1:" + (port != null ? port : "5435") + "/test";
    }

    public static boolean onCi() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }

    /** Whether {@code scripts/pg-replica.sh} is there to run (from the module or from the repository root). */
    public static boolean scriptPresent() {
        return Files.isExecutable(scriptPath("pg-replica.sh"));
    }

    /** {@code scripts/<name>}, from the module or from the repository root. */
    public static Path scriptPath(String name) {
        Path script = Path.of("..", "scripts", name).toAbsolutePath().normalize();
        return Files.isExecutable(script) ? script : Path.of("scripts", name).toAbsolutePath();
    }

    /** Runs {@code scripts/pg-replica.sh args} and returns its output; fails on CI, skips elsewhere, if the pair cannot be had. */
    public static String script(String... args) {
        return runScript("pg-replica.sh", "PostgreSQL replica pair", args);
    }

    /**
     * Runs {@code scripts/<name> args} and returns its output; if it fails, the test fails on CI and is
     * skipped elsewhere, with a message that names {@code servers} and quotes the script's output.
     */
    public static String runScript(String name, String servers, String... args) {
        List<String> command = new ArrayList<>(List.of(scriptPath(name).toString()));
        command.addAll(List.of(args));
        String output;
        int exit;
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            exit = p.waitFor();
        } catch (IOException e) {
            output = e.toString();
            exit = -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        if (exit != 0) {
            String message = servers + " unavailable: " + command + " exited " + exit + ": " + output.strip();
            if (onCi()) {
                fail(message);
            }
            Assumptions.abort(message + " (set CI=true to make this a failure)");
        }
        return output;
    }
}
