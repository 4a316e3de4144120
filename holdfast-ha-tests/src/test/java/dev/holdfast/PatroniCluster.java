package dev.holdfast;

/**
 * The Patroni-managed pair of the HA fault tests, driven by {@code scripts/patroni.sh}: a test that
 * cannot have it fails on CI and is skipped elsewhere.
 */
public final class PatroniCluster {

    private PatroniCluster() {}

    /** The multi-host URL that reaches whichever node leads ({@code HOLDFAST_PATRONI_URL}). */
    public static String url() {
        String url = System.getenv("HOLDFAST_PATRONI_URL");
        return url != null ? url : "jdbc:postgresql://127.0.0.1:5446,127.0.0.1:5447/test?targetServerType=primary";
    }

    /** Runs {@code scripts/patroni.sh args} and returns its output. */
    public static String script(String... args) {
        return PgReplicaPair.runScript("patroni.sh", "Patroni cluster", args);
    }

    /** Whether the script is there to run. */
    public static boolean scriptPresent() {
        return java.nio.file.Files.isExecutable(PgReplicaPair.scriptPath("patroni.sh"));
    }
}
