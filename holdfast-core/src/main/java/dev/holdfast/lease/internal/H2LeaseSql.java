package dev.holdfast.lease.internal;

import dev.holdfast.jdbc.dialect.Dialect;

import java.util.List;

/**
 * H2: {@code MERGE} inside {@code FINAL TABLE}: zero rows means not granted. {@code SET}
 * expressions see the old row, so token and acquired_at can test the old expiry directly. The
 * "now" is computed once, in the source row.
 */
final class H2LeaseSql extends PollingLeaseSql {
    private final String acquire;
    private final String reenter;
    private final String acquireQueued;
    private final String joinQueue;
    private final String renew;

    public H2LeaseSql(String table) {
        super(table, Dialect.H2);
        String now = Dialect.H2.clock();
        String queue = table + "_queue";
        acquire = merge(table, now, "", "t.expires_at <= s.now", false);
        reenter = merge(table, now, "", "(t.expires_at <= s.now OR t.owner = s.owner)", true);
        // A free lease goes to this waiter only if no live waiter queued before it.
        acquireQueued = merge(
                table,
                now,
                ", CAST(? AS VARCHAR) AS waiter",
                "t.expires_at <= s.now"
                        + " AND NOT EXISTS (SELECT 1 FROM " + queue + " q WHERE q.name = s.name AND q.owner <> s.waiter"
                        + " AND q.wait_until > s.now AND q.queued_at < COALESCE((SELECT m.queued_at FROM " + queue
                        + " m"
                        + " WHERE m.name = s.name AND m.owner = s.waiter AND m.wait_until > s.now),"
                        + " TIMESTAMP WITH TIME ZONE '9999-12-31 00:00:00+00'))",
                false);
        joinQueue = "MERGE INTO " + queue + " q USING (SELECT CAST(? AS VARCHAR) AS name, CAST(? AS VARCHAR) AS owner,"
                + " " + now + " AS now, CAST(? AS BIGINT) AS micros) s ON q.name = s.name AND q.owner = s.owner"
                + " WHEN MATCHED THEN UPDATE SET queued_at = CASE WHEN q.wait_until <= s.now THEN s.now ELSE q.queued_at END,"
                + " wait_until = DATEADD(MICROSECOND, s.micros, s.now)"
                + " WHEN NOT MATCHED THEN INSERT (name, owner, queued_at, wait_until)"
                + " VALUES (s.name, s.owner, s.now, DATEADD(MICROSECOND, s.micros, s.now))";
        renew = "SELECT expires_at FROM FINAL TABLE (UPDATE " + table
                + " SET expires_at = DATEADD(MICROSECOND, CAST(? AS BIGINT), " + now + ")"
                + " WHERE name = ? AND owner = ? AND token = ? AND expires_at > " + now + ")";
    }

    /**
     * The acquire, granting a matched row where {@code grants} holds; {@code more} adds source columns.
     * Only the re-entrant form ({@code renews}) can match a live row, so only it needs the {@code CASE}s.
     */
    private static String merge(String table, String now, String more, String grants, boolean renews) {
        return "SELECT token, acquired_at, expires_at FROM FINAL TABLE (MERGE INTO " + table + " t"
                // Unsized casts: a sized CAST would truncate silently, where the column refuses.
                + " USING (SELECT CAST(? AS VARCHAR) AS name, CAST(? AS VARCHAR) AS owner,"
                + " " + now + " AS now, CAST(? AS BIGINT) AS ttl" + more + ") s ON t.name = s.name"
                + " WHEN MATCHED AND " + grants + " THEN UPDATE SET"
                + (renews
                        ? " token = CASE WHEN t.expires_at <= s.now THEN t.token + 1 ELSE t.token END,"
                                + " acquired_at = CASE WHEN t.expires_at <= s.now THEN s.now ELSE t.acquired_at END,"
                        : " token = t.token + 1, acquired_at = s.now,")
                + " owner = s.owner, expires_at = "
                // A renewal never ends before its grant began: "now" may be from before a wait for the row.
                // (For a new grant the old acquired_at is at or before s.now: GREATEST changes nothing.)
                + (renews
                        ? "GREATEST(DATEADD(MICROSECOND, s.ttl, s.now), t.acquired_at)"
                        : "DATEADD(MICROSECOND, s.ttl, s.now)")
                + " WHEN NOT MATCHED THEN INSERT (name, owner, token, acquired_at, expires_at)"
                + " VALUES (s.name, s.owner, 1, s.now, DATEADD(MICROSECOND, s.ttl, s.now)))";
    }

    @Override
    public String acquireSql(boolean reentrant) {
        return reentrant ? reenter : acquire;
    }

    @Override
    public String acquireQueuedSql() {
        return acquireQueued;
    }

    /** The waiter id, in the source row. */
    @Override
    public List<Object> queuedBinds(String name, String waiter, long queueMicros) {
        return List.of(waiter);
    }

    @Override
    public String joinQueueSql() {
        return joinQueue;
    }

    @Override
    String lastInQueue() {
        return "TIMESTAMP WITH TIME ZONE '9999-12-31 00:00:00+00'";
    }

    @Override
    public String plusMicros(String column) {
        return Dialect.H2.plusMicros(column, "CAST(? AS BIGINT)");
    }

    @Override
    public String renewSql() {
        return renew;
    }

    @Override
    public String reserveSql() {
        return "SELECT token, expires_at, " + dialect.clock() + " FROM FINAL TABLE (" + super.reserveSql() + ")";
    }
}
