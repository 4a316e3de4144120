package dev.holdfast.benchmarks;

import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Does {@code KILL QUERY} stay fast? On MariaDB, 8 sessions wait in a loop, each in one statement, and
 * {@code killers} sessions end random sleepers' statements with {@code KILL QUERY}, a pause of 0.5–2.5 ms
 * between two kills of one killer; prints how long the kills took. A sleeper waits either in
 * {@code SELECT IF(1 = 0, 1, SLEEP(bound))} ({@code sleep}) or for a row lock that another session of its own
 * holds ({@code rowlock}, bounded by {@code innodb_lock_wait_timeout}).
 *
 * <p>Measured on MariaDB 10.11 (2 vCPUs, 20 s each, 2026-11-28): {@code sleep} with one killer, 9,099 kills, the
 * longest 4.2 ms; with four killers, 35 of 539 kills (bound 0.25 s) and 36 of 98 (bound 30 s) took over 100 ms,
 * p99 2.0 and 6.0 s, the longest 4.0 and 6.0 s; {@code rowlock} with four killers, 36,406 kills, the longest
 * 5.6 ms. The 2 s are the server's
 * bound on its retries to lock the victim's wait mutex ({@code THD::abort_current_cond_wait}); {@code SLEEP}
 * waits with one mutex shared by every sleeping session. A wake-up by {@code KILL QUERY} can only land on a
 * row-lock wait, or with one kill at a time.
 *
 * <p>Run: {@code java -cp benchmarks/target/benchmarks.jar dev.holdfast.benchmarks.KillQueryStall sleep|rowlock
 * <seconds> <bound seconds> <killers>}.
 */
public final class KillQueryStall {

    private static final int SLEEPERS = 8;
    private static final String TABLE = "holdfast_bench_kill_stall";

    private KillQueryStall() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 4 || !List.of("sleep", "rowlock", "userlock").contains(args[0])) {
            throw new IllegalArgumentException(
                    "usage: KillQueryStall sleep|rowlock|userlock <seconds> <bound seconds> <killers>");
        }
        boolean rowLock = args[0].equals("rowlock");
        boolean userLock = args[0].equals("userlock");
        long seconds = Long.parseLong(args[1]);
        double bound = Double.parseDouble(args[2]);
        int killerCount = Integer.parseInt(args[3]);
        TestDatabase.Kind db = TestDatabase.Kind.MARIADB;
        List<Connection> connections = new ArrayList<>();
        try (Connection admin = DriverManager.getConnection(db.url(), db.user(), db.password())) {
            execute(admin, "DROP TABLE IF EXISTS " + TABLE);
            execute(admin, "CREATE TABLE " + TABLE + " (id INT PRIMARY KEY) ENGINE=InnoDB");
            long[] ids = new long[SLEEPERS];
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong woken = new AtomicLong();
            AtomicLong returned = new AtomicLong();
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < SLEEPERS; i++) {
                Connection sleeper = open(db, connections);
                ids[i] = connectionId(sleeper);
                String statement;
                if (rowLock) {
                    execute(admin, "INSERT INTO " + TABLE + " VALUES (" + i + ")");
                    Connection holder = open(db, connections);
                    holder.setAutoCommit(false);
                    execute(holder, "SELECT id FROM " + TABLE + " WHERE id = " + i + " FOR UPDATE");
                    execute(sleeper, "SET SESSION innodb_lock_wait_timeout = " + Math.max(1, Math.round(bound)));
                    statement = "SELECT id FROM " + TABLE + " WHERE id = " + i + " FOR UPDATE";
                } else if (userLock) {
                    Connection holder = open(db, connections);
                    execute(holder, "SELECT GET_LOCK('" + TABLE + "_" + i + "', 0)");
                    statement = "SELECT IF(1 = 0, 1, GET_LOCK('" + TABLE + "_" + i + "', " + bound + "))";
                } else {
                    statement = "SELECT IF(1 = 0, 1, SLEEP(" + bound + "))";
                }
                threads.add(start("sleeper-" + i, () -> {
                    while (!stop.get()) {
                        try (Statement s = sleeper.createStatement();
                                ResultSet rs = s.executeQuery(statement)) {
                            rs.next();
                            returned.incrementAndGet();
                        } catch (SQLException e) {
                            if (e.getErrorCode() == 1317) { // ended by a kill
                                woken.incrementAndGet();
                            } else if (e.getErrorCode() == 1205) { // the row-lock wait's bound
                                returned.incrementAndGet();
                            } else {
                                throw new IllegalStateException(e);
                            }
                        }
                    }
                }));
            }
            List<Long> kills = Collections.synchronizedList(new ArrayList<>());
            List<Thread> killers = new ArrayList<>();
            for (int k = 0; k < killerCount; k++) {
                Connection killer = open(db, connections);
                killers.add(start("killer-" + k, () -> {
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    while (!stop.get()) {
                        long started = System.nanoTime();
                        try (PreparedStatement ps = killer.prepareStatement("KILL QUERY ?")) {
                            ps.setLong(1, ids[random.nextInt(SLEEPERS)]);
                            ps.execute();
                        } catch (SQLException e) {
                            throw new IllegalStateException(e);
                        }
                        kills.add(System.nanoTime() - started);
                        try {
                            Thread.sleep(random.nextInt(3), 500_000);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }));
            }
            Thread.sleep(seconds * 1000);
            stop.set(true);
            for (Thread t : killers) {
                t.join();
            }
            for (long id : ids) {
                execute(admin, "KILL QUERY " + id);
            }
            for (Thread t : threads) {
                t.join(10_000);
            }
            List<Long> sorted = new ArrayList<>(kills);
            Collections.sort(sorted);
            System.out.printf(
                    "%s, bound %s s, %d killers: %d kills, p50 %.3f ms, p99 %.3f ms, longest %.1f ms,"
                            + " %d over 100 ms; %d statements ended by a kill (1317), %d returned%n",
                    args[0],
                    args[2],
                    killerCount,
                    sorted.size(),
                    sorted.get(sorted.size() / 2) / 1e6,
                    sorted.get(sorted.size() * 99 / 100) / 1e6,
                    sorted.get(sorted.size() - 1) / 1e6,
                    sorted.stream().filter(nanos -> nanos > 100_000_000L).count(),
                    woken.get(),
                    returned.get());
        } finally {
            for (Connection c : connections) {
                c.close();
            }
            try (Connection admin = DriverManager.getConnection(db.url(), db.user(), db.password())) {
                execute(admin, "DROP TABLE IF EXISTS " + TABLE);
            }
        }
    }

    private static Connection open(TestDatabase.Kind db, List<Connection> connections) throws SQLException {
        Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
        connections.add(c);
        return c;
    }

    private static long connectionId(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT CONNECTION_ID()")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void execute(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static Thread start(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.start();
        return t;
    }
}
