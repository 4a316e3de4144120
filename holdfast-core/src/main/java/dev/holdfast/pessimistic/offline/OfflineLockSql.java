package dev.holdfast.pessimistic.offline;

import dev.holdfast.jdbc.dialect.Dialect;

/**
 * The SQL of {@link JdbcLockManager}, one section per dialect. Every lock operation is one
 * statement; the table name is a validated identifier, everything else is a bind parameter. Text and
 * binding order only: {@link JdbcLockManager} runs them.
 *
 * <p>{@code tryLock} is an upsert that, on a conflict, always updates the row — to the new lock if
 * the old one has expired (or was released), to itself otherwise — and returns the row's final
 * state. The caller holds the lock if and only if the returned lock id is the one it generated;
 * otherwise the returned row says who holds it and until when. "Now" is evaluated once per
 * statement and used in every assignment, so the four columns can never disagree.
 *
 * <p>Why always update rather than {@code DO UPDATE … WHERE expired}: with a WHERE, a refused
 * attempt returns no row, and a second read from the statement's snapshot can miss a holder that
 * committed a moment earlier, so the refusal could not always say who holds the lock and until
 * when. Updating the row to itself makes the upsert's own returned row the answer, on all three
 * databases alike. The cost is a row version written per refusal; refusals are the rare case
 * (someone else is editing), and the write happens under the row lock the upsert takes anyway.
 *
 * <p>A release sets {@code lock_id} to NULL (the id then authorizes nothing) and the expiry to a
 * fixed instant in 2000, long past on any clock, so the row is free at once and stays free even if
 * the clock steps back. The row itself stays for the next {@code tryLock} to take over in place:
 * measured, deleting it made concurrent re-inserts deadlock on MariaDB and hit 23505 on H2.
 *
 * <p>Whatever ends a lock records it in the row's {@code ended_*} columns — the ended id, its owner,
 * why ({@code RELEASED}, {@code BROKEN}, {@code REPLACED}, {@code EXPIRED}), by whom and when — in the
 * same statement, so {@link #ended()} can tell a refused id exactly what happened. The
 * {@code ended_*} assignments come first: MariaDB's single-table assignments see earlier ones.
 *
 * <p>Bind order: tryLock(type, id, lockId, owner, expiryMicros); check(lockId); ended(lockId);
 * release(lockId[, owner]); extend(incrementMicros, maxMicros, lockId[, owner]);
 * forceRelease(by, type, id); held([type][, owner], limit); purge(limit).
 */
abstract class OfflineLockSql {

    final String table;

    OfflineLockSql(String table) {
        this.table = table;
    }

    static OfflineLockSql forDialect(Dialect dialect, String table) {
        return switch (dialect) {
            case H2 -> new H2(table);
            case POSTGRESQL -> new PostgreSql(table);
            case MARIADB -> new MariaDb(table);
        };
    }

    abstract String tryLock(boolean relaxed);

    abstract String release(boolean withOwner, boolean relaxed);

    abstract String extend(boolean withOwner);

    abstract String forceRelease();

    /**
     * Gives the owner's live lock a new id and expiry (a same-owner re-acquire: the old id
     * authorizes nothing any more). Binds: new lock id, expiry in microseconds, type, id, owner.
     */
    abstract String replaceOwn(boolean relaxed);

    /** Database time that is constant within the statement, so that an index range can use it. */
    abstract String statementNow();

    abstract String clock();

    abstract String limit();

    /** Deletes at most {@code ?} expired rows that no acquirer holds (binds the limit). */
    abstract String purgeSql();

    /** Whether {@link #purgeSql()} must run under READ COMMITTED (MariaDB: no gap locks); else as the pool's isolation. */
    boolean purgeNeedsReadCommitted() {
        return false;
    }

    /**
     * The sets that record how the row's current lock ends ({@code reason} a SQL literal,
     * {@code by} and {@code at} SQL expressions), to precede {@code lock_id = …}.
     */
    static String ending(String reason, String by, String at) {
        return "ended_lock_id = lock_id, ended_owner = lock_owner, ended_reason = " + reason + ", ended_by = " + by
                + ", ended_at = " + at + ", ";
    }

    /**
     * The sets of a takeover: when {@code takenOver} (an expired lock is replaced by a new one), the
     * expired lock is recorded as ended, else the row's record stays. Columns read through {@code old}.
     */
    static String takeover(String takenOver, String old) {
        String c = "CASE WHEN " + takenOver + " THEN ";
        return "ended_lock_id = " + c + old + "lock_id ELSE " + old + "ended_lock_id END,"
                + " ended_owner = " + c + old + "lock_owner ELSE " + old + "ended_owner END,"
                + " ended_reason = " + c + "'EXPIRED' ELSE " + old + "ended_reason END,"
                + " ended_by = " + c + "NULL ELSE " + old + "ended_by END,"
                + " ended_at = " + c + old + "expires_at ELSE " + old + "ended_at END, ";
    }

    /** The ended lock of an id that no row holds any more, and who holds its resource now. */
    String ended() {
        return "SELECT lock_type, resource_id, ended_owner, ended_reason, ended_by, ended_at, lock_owner, acquired_at,"
                + " expires_at, CASE WHEN lock_id IS NOT NULL AND expires_at > " + clock() + " THEN 1 ELSE 0 END"
                + " FROM " + table + " WHERE ended_lock_id = ?";
    }

    String check() {
        return "SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at,"
                + " CASE WHEN expires_at > " + clock() + " THEN 1 ELSE 0 END"
                + " FROM " + table + " WHERE lock_id = ?";
    }

    /** The live lock on a type and id, if any (operator view). */
    String holder() {
        return "SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at FROM " + table
                + " WHERE lock_type = ? AND resource_id = ? AND lock_id IS NOT NULL AND expires_at > " + clock();
    }

    String held(boolean byType, boolean byOwner) {
        return "SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at FROM " + table
                + " WHERE lock_id IS NOT NULL AND expires_at > " + statementNow()
                + (byType ? " AND lock_type = ?" : "")
                + (byOwner ? " AND lock_owner = ?" : "")
                + " ORDER BY expires_at, lock_type, resource_id " + limit();
    }

    /** Live locks a page at a time by (type, id), the primary key: binds [type][, owner][, after type, type, id], limit. */
    String heldByResource(boolean byType, boolean byOwner, boolean after) {
        return "SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at FROM " + table
                + " WHERE lock_id IS NOT NULL AND expires_at > " + statementNow()
                + (byType ? " AND lock_type = ?" : "")
                + (byOwner ? " AND lock_owner = ?" : "")
                + (after ? " AND (lock_type > ? OR (lock_type = ? AND resource_id > ?))" : "")
                + " ORDER BY lock_type, resource_id " + limit();
    }

    /**
     * PostgreSQL: {@code INSERT … ON CONFLICT DO UPDATE … RETURNING}; "now" is the
     * {@code clock_timestamp()} of the source row (read once, then {@code EXCLUDED.acquired_at}).
     * The relaxed form evaluates {@code set_config('synchronous_commit', 'off', true)} in the same
     * statement: transaction-local, so it governs only this autocommit transaction's commit. The
     * durable forms (and every extension) evaluate {@link #DURABLE} the same way, so a server or
     * role configured with {@code synchronous_commit = off} cannot make them asynchronous.
     */
    static final class PostgreSql extends OfflineLockSql {
        private static final String RELAX = "set_config('synchronous_commit', 'off', true) = 'off'";
        /**
         * The durable form: raises {@code synchronous_commit} to {@code on} for this transaction if
         * the session (server, database or role default) has {@code off} or {@code local}; keeps a
         * stronger setting. Transaction-local like {@link #RELAX}.
         */
        private static final String DURABLE = "set_config('synchronous_commit', CASE WHEN"
                + " current_setting('synchronous_commit') IN ('off', 'local') THEN 'on'"
                + " ELSE current_setting('synchronous_commit') END, true) IS NOT NULL";

        PostgreSql(String table) {
            super(table);
        }

        @Override
        String tryLock(boolean relaxed) {
            String taken = "l.expires_at <= EXCLUDED.acquired_at";
            return "INSERT INTO " + table
                    + " AS l (lock_type, resource_id, lock_id, lock_owner, acquired_at, expires_at)"
                    + " SELECT ?, ?, ?, ?, c.now, c.now + ? * interval '1 microsecond'"
                    + " FROM (SELECT clock_timestamp() AS now) c"
                    + " WHERE " + (relaxed ? RELAX : DURABLE)
                    + " ON CONFLICT (lock_type, resource_id) DO UPDATE SET "
                    + takeover(taken + " AND l.lock_id IS NOT NULL", "l.")
                    + "lock_id = CASE WHEN " + taken + " THEN EXCLUDED.lock_id ELSE l.lock_id END,"
                    + " lock_owner = CASE WHEN " + taken + " THEN EXCLUDED.lock_owner ELSE l.lock_owner END,"
                    + " acquired_at = CASE WHEN " + taken + " THEN EXCLUDED.acquired_at ELSE l.acquired_at END,"
                    + " expires_at = CASE WHEN " + taken + " THEN EXCLUDED.expires_at ELSE l.expires_at END"
                    + " RETURNING lock_id, lock_owner, acquired_at, expires_at";
        }

        @Override
        String release(boolean withOwner, boolean relaxed) {
            return "UPDATE " + table + " SET " + ending("'RELEASED'", "lock_owner", "clock_timestamp()")
                    + "lock_id = NULL, expires_at = TIMESTAMPTZ '2000-01-01 00:00:00+00'"
                    + " WHERE lock_id = ? AND expires_at > clock_timestamp()"
                    + (withOwner ? " AND lock_owner = ?" : "")
                    + " AND " + (relaxed ? RELAX : DURABLE);
        }

        @Override
        String extend(boolean withOwner) {
            return "UPDATE " + table + " SET expires_at = LEAST(expires_at + ? * interval '1 microsecond',"
                    + " clock_timestamp() + ? * interval '1 microsecond')"
                    + " WHERE lock_id = ? AND expires_at > clock_timestamp()"
                    + (withOwner ? " AND lock_owner = ?" : "")
                    + " AND " + DURABLE;
        }

        @Override
        String forceRelease() {
            return "UPDATE " + table + " SET " + ending("'BROKEN'", "?", "clock_timestamp()")
                    + "lock_id = NULL, expires_at = TIMESTAMPTZ '2000-01-01 00:00:00+00'"
                    + " WHERE lock_type = ? AND resource_id = ? AND lock_id IS NOT NULL AND expires_at > clock_timestamp()"
                    + " AND " + DURABLE;
        }

        @Override
        String replaceOwn(boolean relaxed) {
            return "UPDATE " + table + " AS l SET " + ending("'REPLACED'", "lock_owner", "c.now")
                    + "lock_id = ?, acquired_at = c.now,"
                    + " expires_at = c.now + ? * interval '1 microsecond'"
                    + " FROM (SELECT clock_timestamp() AS now) c"
                    + " WHERE l.lock_type = ? AND l.resource_id = ? AND l.lock_owner = ?"
                    + " AND l.lock_id IS NOT NULL AND l.expires_at > c.now AND " + (relaxed ? RELAX : DURABLE);
        }

        @Override
        String statementNow() {
            return "statement_timestamp()";
        }

        @Override
        String clock() {
            return Dialect.POSTGRESQL.clock();
        }

        @Override
        String limit() {
            return "LIMIT ?";
        }

        /**
         * Locks a batch of expired rows, skipping rows an acquirer holds right now, and deletes them
         * by key. Not by ctid: a row taken over and released after the statement's snapshot has a
         * new version that a TID scan does not see, so batches came up short (measured); a key join
         * follows the row to its newest version and re-checks the expiry there.
         */
        @Override
        String purgeSql() {
            return "WITH batch AS (SELECT lock_type, resource_id FROM " + table
                    + " WHERE expires_at <= statement_timestamp() LIMIT ? FOR UPDATE SKIP LOCKED)"
                    + " DELETE FROM " + table + " t USING batch WHERE t.lock_type = batch.lock_type"
                    + " AND t.resource_id = batch.resource_id AND t.expires_at <= statement_timestamp()";
        }
    }

    /**
     * MariaDB: {@code INSERT … ON DUPLICATE KEY UPDATE … RETURNING}, which returns the row's final
     * state. Assignments apply left to right and later ones see earlier results, so every condition
     * reads only {@code expires_at}, which is assigned last. {@code UTC_TIMESTAMP(6)} is fixed per
     * statement, so {@code VALUES(acquired_at)} is "now" throughout.
     */
    static final class MariaDb extends OfflineLockSql {
        MariaDb(String table) {
            super(table);
        }

        @Override
        String tryLock(boolean relaxed) {
            String taken = "expires_at <= VALUES(acquired_at)";
            return "INSERT INTO " + table + " (lock_type, resource_id, lock_id, lock_owner, acquired_at, expires_at)"
                    + " VALUES (?, ?, ?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)"
                    + " ON DUPLICATE KEY UPDATE "
                    + takeover(taken + " AND lock_id IS NOT NULL", "")
                    + "lock_id = IF(" + taken + ", VALUES(lock_id), lock_id),"
                    + " lock_owner = IF(" + taken + ", VALUES(lock_owner), lock_owner),"
                    + " acquired_at = IF(" + taken + ", VALUES(acquired_at), acquired_at),"
                    + " expires_at = IF(" + taken + ", VALUES(expires_at), expires_at)"
                    + " RETURNING lock_id, lock_owner, acquired_at, expires_at";
        }

        @Override
        String release(boolean withOwner, boolean relaxed) {
            return "UPDATE " + table + " SET " + ending("'RELEASED'", "lock_owner", "UTC_TIMESTAMP(6)")
                    + "lock_id = NULL, expires_at = TIMESTAMP '2000-01-01 00:00:00'"
                    + " WHERE lock_id = ? AND expires_at > UTC_TIMESTAMP(6)"
                    + (withOwner ? " AND lock_owner = ?" : "");
        }

        @Override
        String extend(boolean withOwner) {
            return "UPDATE " + table + " SET expires_at = LEAST(expires_at + INTERVAL ? MICROSECOND,"
                    + " UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)"
                    + " WHERE lock_id = ? AND expires_at > UTC_TIMESTAMP(6)"
                    + (withOwner ? " AND lock_owner = ?" : "");
        }

        @Override
        String forceRelease() {
            return "UPDATE " + table + " SET " + ending("'BROKEN'", "?", "UTC_TIMESTAMP(6)")
                    + "lock_id = NULL, expires_at = TIMESTAMP '2000-01-01 00:00:00'"
                    + " WHERE lock_type = ? AND resource_id = ? AND lock_id IS NOT NULL AND expires_at > UTC_TIMESTAMP(6)";
        }

        @Override
        String replaceOwn(boolean relaxed) {
            // UTC_TIMESTAMP(6) is constant within a statement.
            return "UPDATE " + table + " SET " + ending("'REPLACED'", "lock_owner", "UTC_TIMESTAMP(6)")
                    + "lock_id = ?, acquired_at = UTC_TIMESTAMP(6),"
                    + " expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND"
                    + " WHERE lock_type = ? AND resource_id = ? AND lock_owner = ?"
                    + " AND lock_id IS NOT NULL AND expires_at > UTC_TIMESTAMP(6)";
        }

        @Override
        String statementNow() {
            return "UTC_TIMESTAMP(6)";
        }

        @Override
        String clock() {
            return Dialect.MARIADB.clock();
        }

        @Override
        String limit() {
            return "LIMIT ?";
        }

        /**
         * {@code DELETE … LIMIT} under READ COMMITTED: no gap locks, so acquirers inserting new
         * rows are never blocked by a purge; only a takeover of a row in the current batch waits
         * for that batch. The isolation cannot be scoped to a statement ({@code SET STATEMENT}
         * refuses it, 1971), so it is set on the connection and restored on every path.
         */
        @Override
        String purgeSql() {
            return "DELETE FROM " + table + " WHERE expires_at <= UTC_TIMESTAMP(6) LIMIT ?";
        }

        @Override
        boolean purgeNeedsReadCommitted() {
            return true;
        }
    }

    /**
     * H2: {@code MERGE … USING} inside {@code FINAL TABLE}. The clock function is called once, in
     * the source row, and every assignment reads that value; H2 assignments see the old row.
     */
    static final class H2 extends OfflineLockSql {
        H2(String table) {
            super(table);
        }

        @Override
        String tryLock(boolean relaxed) {
            String taken = "t.expires_at <= s.clock_now";
            return "SELECT lock_id, lock_owner, acquired_at, expires_at FROM FINAL TABLE (MERGE INTO " + table + " t"
                    // Unsized casts: a sized CAST would truncate silently, where the column refuses.
                    + " USING (SELECT CAST(? AS VARCHAR) lock_type, CAST(? AS VARCHAR) resource_id,"
                    + " CAST(? AS VARCHAR) lock_id, CAST(? AS VARCHAR) lock_owner,"
                    + " CAST(? AS BIGINT) micros, " + clock() + " clock_now) s"
                    + " ON t.lock_type = s.lock_type AND t.resource_id = s.resource_id"
                    + " WHEN MATCHED THEN UPDATE SET "
                    + takeover(taken + " AND t.lock_id IS NOT NULL", "t.")
                    + "lock_id = CASE WHEN " + taken + " THEN s.lock_id ELSE t.lock_id END,"
                    + " lock_owner = CASE WHEN " + taken + " THEN s.lock_owner ELSE t.lock_owner END,"
                    + " acquired_at = CASE WHEN " + taken + " THEN s.clock_now ELSE t.acquired_at END,"
                    + " expires_at = CASE WHEN " + taken
                    + " THEN DATEADD(MICROSECOND, s.micros, s.clock_now) ELSE t.expires_at END"
                    + " WHEN NOT MATCHED THEN INSERT (lock_type, resource_id, lock_id, lock_owner, acquired_at, expires_at)"
                    + " VALUES (s.lock_type, s.resource_id, s.lock_id, s.lock_owner, s.clock_now,"
                    + " DATEADD(MICROSECOND, s.micros, s.clock_now)))";
        }

        @Override
        String release(boolean withOwner, boolean relaxed) {
            return "UPDATE " + table + " SET " + ending("'RELEASED'", "lock_owner", clock())
                    + "lock_id = NULL, expires_at = TIMESTAMP WITH TIME ZONE '2000-01-01 00:00:00+00'"
                    + " WHERE lock_id = ? AND expires_at > " + clock()
                    + (withOwner ? " AND lock_owner = ?" : "");
        }

        @Override
        String extend(boolean withOwner) {
            return "UPDATE " + table + " SET expires_at = LEAST(DATEADD(MICROSECOND, CAST(? AS BIGINT), expires_at),"
                    + " DATEADD(MICROSECOND, CAST(? AS BIGINT), " + clock() + "))"
                    + " WHERE lock_id = ? AND expires_at > " + clock()
                    + (withOwner ? " AND lock_owner = ?" : "");
        }

        @Override
        String forceRelease() {
            return "UPDATE " + table + " SET " + ending("'BROKEN'", "CAST(? AS VARCHAR)", clock())
                    + "lock_id = NULL, expires_at = TIMESTAMP WITH TIME ZONE '2000-01-01 00:00:00+00'"
                    + " WHERE lock_type = ? AND resource_id = ? AND lock_id IS NOT NULL AND expires_at > " + clock();
        }

        @Override
        String replaceOwn(boolean relaxed) {
            return "UPDATE " + table + " SET " + ending("'REPLACED'", "lock_owner", clock())
                    + "lock_id = ?, acquired_at = " + clock() + ","
                    + " expires_at = DATEADD(MICROSECOND, CAST(? AS BIGINT), " + clock() + ")"
                    + " WHERE lock_type = ? AND resource_id = ? AND lock_owner = ?"
                    + " AND lock_id IS NOT NULL AND expires_at > " + clock();
        }

        @Override
        String statementNow() {
            // Fixed per transaction on H2, and every call here is its own autocommit transaction.
            return "CURRENT_TIMESTAMP";
        }

        @Override
        String clock() {
            return Dialect.H2.clock();
        }

        @Override
        String limit() {
            return "FETCH FIRST ? ROWS ONLY";
        }

        @Override
        String purgeSql() {
            return "DELETE FROM " + table + " WHERE expires_at <= CURRENT_TIMESTAMP FETCH FIRST ? ROWS ONLY";
        }
    }
}
