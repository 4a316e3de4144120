package dev.holdfast.benchmarks;

import dev.holdfast.testing.TestDatabase;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Whether a hand-off should notify every service's listener on the table's channel (what the lease
 * did) or only its waiter's listener on a channel of its own (what it does): 8 listener connections, each read by
 * its own thread as the lease listener reads (pgjdbc's trailing 1 ms peek skipped), and one sender
 * that every 2 ms commits a single-row update durably together with one {@code pg_notify} for one
 * listener, in turn. {@code shared}: all listen on one channel and each skips the payloads of others;
 * {@code own}: each listens on a channel of its own and only the target's client is sent anything
 * (PostgreSQL 15 still signals every listening backend of the database). Reports the target's delivery
 * latency from the sender's call, p50 / p90 / p99, per round and the medians over rounds, the modes
 * alternating. Usage: {@code java -cp benchmarks.jar dev.holdfast.benchmarks.NotifyFanout <rounds>
 * <notifications per round>}.
 */
public final class NotifyFanout {

    static final int LISTENERS = 8;
    static final String TABLE = "holdfast_bench_notify_fanout";

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        int count = Integer.parseInt(args[1]);
        try (Connection admin = connect();
                Statement s = admin.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + TABLE);
            s.execute("CREATE TABLE " + TABLE + " (id INT PRIMARY KEY, v BIGINT NOT NULL)");
            s.execute("INSERT INTO " + TABLE + " VALUES (1, 0)");
        }
        List<String> modes = List.of("shared", "own");
        double[][][] results = new double[modes.size()][rounds][];
        for (int round = -1; round < rounds; round++) { // round -1 warms up
            for (int k = 0; k < modes.size(); k++) {
                int m = (k + Math.max(round, 0)) % modes.size();
                double[] r = run(modes.get(m).equals("shared"), count);
                if (round >= 0) {
                    results[m][round] = r;
                    System.out.printf(
                            Locale.ROOT,
                            "round %d %-6s p50 %.3f p90 %.3f p99 %.3f ms%n",
                            round,
                            modes.get(m),
                            r[0],
                            r[1],
                            r[2]);
                }
            }
        }
        for (int m = 0; m < modes.size(); m++) {
            System.out.printf(
                    Locale.ROOT,
                    "%-6s medians over %d rounds: p50 %.3f p90 %.3f p99 %.3f ms%n",
                    modes.get(m),
                    rounds,
                    median(results[m], 0),
                    median(results[m], 1),
                    median(results[m], 2));
        }
        try (Connection admin = connect();
                Statement s = admin.createStatement()) {
            s.execute("DROP TABLE " + TABLE);
        }
    }

    /** One round: p50, p90 and p99 of the target's delivery latency in ms, the first tenth left out as warm-up. */
    static double[] run(boolean shared, int count) throws Exception {
        long[] sent = new long[count];
        long[] latency = new long[count];
        CountDownLatch done = new CountDownLatch(count);
        List<Connection> listeners = new ArrayList<>();
        try {
            for (int i = 0; i < LISTENERS; i++) {
                Connection c = connect();
                listeners.add(c);
                try (Statement s = c.createStatement()) {
                    s.execute("LISTEN " + channel(shared, i));
                }
                PGConnection pg = c.unwrap(PGConnection.class);
                peekAfter(pg, Long.MAX_VALUE);
                int me = i;
                Thread reader = new Thread(
                        () -> {
                            try {
                                while (done.getCount() > 0) {
                                    PGNotification[] got = pg.getNotifications(250);
                                    long now = System.nanoTime();
                                    for (PGNotification n : got == null ? new PGNotification[0] : got) {
                                        String[] p = n.getParameter().split(" ");
                                        if (Integer.parseInt(p[0]) == me) {
                                            int k = Integer.parseInt(p[1]);
                                            latency[k] = now - sent[k];
                                            done.countDown();
                                        }
                                    }
                                }
                            } catch (SQLException e) {
                                // closed at the end of the round
                            }
                        },
                        "notify-fanout-" + i);
                reader.setDaemon(true);
                reader.start();
            }
            try (Connection sender = connect();
                    PreparedStatement ps = sender.prepareStatement("WITH u AS (UPDATE " + TABLE
                            + " SET v = v + 1 WHERE id = 1 RETURNING v) SELECT pg_notify(?, ?) FROM u")) {
                for (int k = 0; k < count; k++) {
                    int target = k % LISTENERS;
                    ps.setString(1, channel(shared, target));
                    ps.setString(2, target + " " + k);
                    sent[k] = System.nanoTime();
                    ps.executeQuery().close();
                    Thread.sleep(2);
                }
            }
            if (!done.await(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException(done.getCount() + " notifications never arrived");
            }
        } finally {
            for (Connection c : listeners) {
                c.close();
            }
        }
        long[] measured = Arrays.copyOfRange(latency, count / 10, count);
        Arrays.sort(measured);
        return new double[] {ms(measured, 0.5), ms(measured, 0.9), ms(measured, 0.99)};
    }

    static String channel(boolean shared, int listener) {
        return shared ? "holdfast_bench_fanout" : "holdfast_bench_fanout_" + listener;
    }

    /**
     * Sets when pgjdbc next makes its blocking 1 ms "anything more?" read after a batch of
     * notifications: {@code Long.MAX_VALUE} skips it, as the lease listener does; 0 restores it.
     */
    static void peekAfter(PGConnection pg, long millis) throws ReflectiveOperationException {
        Object executor = ((org.postgresql.core.BaseConnection) pg).getQueryExecutor();
        java.lang.reflect.Field f = org.postgresql.core.QueryExecutorBase.class.getDeclaredField("pgStream");
        f.setAccessible(true);
        Object stream = f.get(executor);
        java.lang.reflect.Field check = stream.getClass().getDeclaredField("nextStreamAvailableCheckTime");
        check.setAccessible(true);
        check.setLong(stream, millis);
    }

    static Connection connect() throws SQLException {
        TestDatabase.Kind kind = TestDatabase.Kind.POSTGRESQL;
        return DriverManager.getConnection(kind.url(), kind.user(), kind.password());
    }

    static double ms(long[] sorted, double q) {
        return sorted[Math.min(sorted.length - 1, (int) (sorted.length * q))] / 1e6;
    }

    static double median(double[][] rounds, int i) {
        double[] v = Arrays.stream(rounds).mapToDouble(r -> r[i]).sorted().toArray();
        return v[v.length / 2];
    }
}
