package dev.holdfast.jdbc;

/**
 * How Holdfast commits what it may commit without waiting for the durable flush: offline locks'
 * {@code tryLock} and {@code releaseLock} ({@code JdbcLockManager.Builder#durability}), and leases'
 * releases ({@code LeaseService.Builder#durability}; a lease's acquires and renewals are always
 * durable, so no fencing token can repeat after a crash: the next acquire's durable commit flushes
 * an earlier relaxed release too).
 *
 * <p><b>Why relaxing is safe.</b> An asynchronous commit is visible to every other session at
 * once, exactly like a durable one; only a database crash can lose it, and then it loses a
 * <em>suffix</em> of recent commits (the WAL is replayed in order, and any later durable commit —
 * of a lock or of the business data — flushes every earlier record too). What survives is
 * therefore a state the lock table really was in, where at most one lock per resource is live.
 * The two ways a lost operation shows:
 * <ul>
 *   <li>A lost <b>acquire</b>: the row is absent, so the holder's {@code checkLock} at submit
 *       raises {@code LockNotHeldException} and the edit is refused; meanwhile another user may take
 *       the lock. Nobody is authorized twice. (The pattern requires {@code checkLock} on submit.)</li>
 *   <li>A lost <b>release</b>: the old lock is live again until it expires, so the next editor
 *       waits at most the expiry (default 5 minutes); its lock id belongs to the user who had just
 *       released it.</li>
 * </ul>
 * {@code extendLockExpiration} is always durable (the user was promised a time), and so is the
 * operator's {@code forceRelease} ({@code purge} deletes only expired rows: a lost purge loses
 * nothing). On PostgreSQL "durable" is enforced by the statement, not left to the server's
 * defaults: the durable statements evaluate {@code set_config('synchronous_commit', …, true)} too,
 * raising {@code off} or {@code local} to {@code on} for their own transaction and keeping a stronger
 * setting ({@code remote_write}, {@code remote_apply}).
 *
 * <p><b>Per database.</b> PostgreSQL: {@code set_config('synchronous_commit', 'off', true)} is
 * evaluated inside the lock statement itself, so it applies to that statement's own autocommit
 * transaction and ends with it; the session setting is never touched. MariaDB has no
 * per-transaction switch ({@code innodb_flush_log_at_trx_commit} is global), so there both modes
 * commit as the server is configured. Embedded H2 has no commit-time flush to skip; both modes
 * are the same.
 */
public enum CommitDurability {

    /** Every operation waits for a durable commit. */
    DURABLE,

    /**
     * Offline locks' {@code tryLock} and {@code releaseLock}, and leases' releases, do not wait for
     * the commit to reach disk, where the database allows choosing that per transaction
     * (PostgreSQL). The default.
     */
    RELAXED
}
