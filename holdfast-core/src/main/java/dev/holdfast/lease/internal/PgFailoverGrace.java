package dev.holdfast.lease.internal;

/**
 * The grace after a promotion, in the SQL of PostgreSQL's grant statements (after Chubby, whose new
 * master waits out a lease timeout before it trusts its own view of the leases).
 *
 * <p>With an asynchronous standby, the old primary's last grants and renewals may never reach the
 * server that is promoted: it sees the lease free while a holder still believes in it, until that
 * grant's TTL runs out. Such a grant was made before the promotion and lasts at most the longest
 * TTL, so nothing granted later than one longest TTL after the promotion can overlap it. The first
 * grant statement that runs on a new timeline records when ({@code <table>_timelines}); until the
 * grace has passed since then, every grant statement refuses (an acquire is refused, a waiter
 * stays queued, a hand-off hands nothing) and only renewals and releases go through. The first
 * timeline (a cluster never promoted) has no predecessor and no grace.
 *
 * <p>The record is a data-modifying CTE of the grant statement itself, so it costs no round trip.
 * Its insert never waits: a grant statement may already hold a lease row when it runs, and two
 * such statements waiting for each other's timeline row would deadlock. It inserts only under a
 * transaction-level advisory lock taken without waiting ({@code pg_try_advisory_xact_lock}), so one
 * statement inserts and the others skip; a statement that skips, or cannot yet see the row, refuses
 * (the row is read in the statement's snapshot), which can only make the grace longer.
 */
final class PgFailoverGrace {

    /** First key of the advisory lock under which the timeline row is inserted; 0x54696d65 is "Time". */
    static final int RECORD_LOCK_KEY = 0x54696d65;

    private final String timelines;
    private final String timeline;
    private final long graceMicros;

    /**
     * @param table       the lease table; the record is {@code <table>_timelines}
     * @param timeline    the SQL expression of the server's timeline
     * @param graceMicros how long nothing is granted after a promotion; 0 for no grace
     */
    PgFailoverGrace(String table, String timeline, long graceMicros) {
        this.timelines = table + "_timelines";
        this.timeline = timeline;
        this.graceMicros = graceMicros;
    }

    /** A CTE and its comma that records the first statement on a new timeline, to follow {@code WITH}; "" without grace. */
    String recordCte() {
        if (graceMicros == 0) {
            return "";
        }
        return "r AS (INSERT INTO " + timelines + " (timeline, first_seen) SELECT v.tl, clock_timestamp()"
                + " FROM (SELECT " + timeline + " AS tl) v WHERE CASE WHEN v.tl > 1 AND NOT EXISTS (SELECT 1 FROM "
                + timelines + " x WHERE x.timeline = v.tl) THEN pg_try_advisory_xact_lock(" + RECORD_LOCK_KEY
                + ", v.tl) ELSE false END ON CONFLICT (timeline) DO NOTHING), ";
    }

    /** {@link #recordCte} as the {@code WITH} clause of a statement that has none; "" without grace. */
    String recordWith() {
        String cte = recordCte();
        return cte.isEmpty() ? "" : "WITH " + cte.substring(0, cte.length() - 2) + " ";
    }

    /** " WHERE " the condition that the grace is over (or there is none); "" without grace. */
    String whereOver() {
        String and = andOver();
        return and.isEmpty() ? "" : " WHERE" + and.substring(" AND".length());
    }

    /** " AND " the condition that the grace is over (or there is none); "" without grace. */
    String andOver() {
        return andOverAt("clock_timestamp()");
    }

    /**
     * " AND " the condition that the grace is over at {@code time} (or there is none), for a grant
     * stamped {@code time}; "" without grace.
     */
    String andOverAt(String time) {
        if (graceMicros == 0) {
            return "";
        }
        return " AND (" + timeline + " = 1 OR EXISTS (SELECT 1 FROM " + timelines + " o WHERE o.timeline = " + timeline
                + " AND o.first_seen <= " + time + " - " + graceMicros + " * interval '1 microsecond'))";
    }
}
