package dev.holdfast.spring.boot.web;

import dev.holdfast.internal.Arguments;
import dev.holdfast.internal.Failures;
import dev.holdfast.pessimistic.offline.HeldLock;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.pessimistic.offline.LockNotHeldException;
import dev.holdfast.spring.boot.OfflineLockLostException;
import org.jspecify.annotations.Nullable;
import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * The server side of {@code /holdfast/heartbeat.js}: an application maps one POST endpoint per edit
 * page to {@link #extend} with the resource and the signed-in user, and renders {@link #interval()} and
 * {@link #status} into the page:
 *
 * <pre>{@code
 * @PostMapping("/admin/orders/{n}/edit/heartbeat")
 * ResponseEntity<?> heartbeat(@PathVariable String n, @RequestParam(required = false) String lockId, Principal user) {
 *     return heartbeat.extend(lockId, "purchase_order", n, user.getName());
 * }
 * }</pre>
 *
 * Each beat adds one {@link #interval()} to the lock's expiry (the lock manager caps it), so a page
 * that beats on time keeps its lock's remaining time steady, and a page that stops beating loses the
 * lock one expiry later. Times left are computed from database time.
 */
public class LockHeartbeat {

    private final LockManager locks;
    private final JdbcLockManager store;
    private final DataSource dataSource;
    private final Duration interval;

    /**
     * @param locks      extends the locks (may be a metered wrapper of {@code store})
     * @param store      reads who holds a lock until when
     * @param dataSource the pool, for the database time
     * @param interval   how often the page beats, and how much each beat adds; more than zero
     * @throws IllegalArgumentException if an argument is null, or {@code interval} is not more than zero
     */
    public LockHeartbeat(LockManager locks, JdbcLockManager store, DataSource dataSource, Duration interval) {
        this.locks = Arguments.notNull(locks, "locks");
        this.store = Arguments.notNull(store, "store");
        this.dataSource = Arguments.notNull(dataSource, "dataSource");
        this.interval = Arguments.notNull(interval, "interval");
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("interval must be positive, not " + interval);
        }
    }

    /** {@return how often a page beats, and how much each beat adds (for {@code data-holdfast-interval-seconds})} */
    public Duration interval() {
        return interval;
    }

    /**
     * Who holds the lock on {@code type}/{@code id}, since and until when, with the seconds left by database time.
     *
     * @param type the locked resource's type, e.g. {@code purchase_order}
     * @param id   the locked resource's id
     * @return the live lock's status; empty if nobody holds a live lock on the resource
     * @throws dev.holdfast.DatabaseException if the database failed
     */
    public Optional<LockStatus> status(String type, String id) {
        Optional<HeldLock> held = store.holder(type, id);
        if (held.isEmpty()) {
            return Optional.empty();
        }
        HeldLock lock = held.get();
        long left =
                Math.max(0, Duration.between(databaseNow(), lock.expiresAt()).toSeconds());
        return Optional.of(new LockStatus(lock.owner(), lock.acquiredAt(), lock.expiresAt(), left));
    }

    /**
     * One beat: extends {@code lockId}, which must be the live lock of {@code owner} on {@code type}/{@code id}.
     *
     * @param lockId the lock id the page carries, as text; null or blank answers 400
     * @param type   the locked resource's type, e.g. {@code purchase_order}
     * @param id     the locked resource's id
     * @param owner  the signed-in user, who must hold the lock
     * @return 200 {@code {"held":true,"owner":…,"expiresAt":…,"secondsLeft":…,"intervalSeconds":…}}; 409 problem
     *         detail ({@code "held":false}) if the lock is lost (expired, broken, taken over, another's);
     *         400 for a missing or malformed lock id
     */
    public ResponseEntity<?> extend(String lockId, String type, String id, String owner) {
        return extend(lockId, type, id, owner, null);
    }

    /**
     * {@link #extend(String, String, String, String)}, and the new expiry as the page shows its times:
     * the 200 answer gets {@code "expiresAtText"}: {@code display.apply(expiresAt)} (e.g. in the viewer's
     * time zone and language), which {@code heartbeat.js} shows instead of formatting the time itself,
     * so the edit page's heartbeat and its server-rendered times read the same. A refusal for a lock that
     * ended gets {@code "endedAtText"} the same way.
     *
     * @param lockId  the lock id the page carries, as text; null or blank answers 400
     * @param type    the locked resource's type, e.g. {@code purchase_order}
     * @param id      the locked resource's id
     * @param owner   the signed-in user, who must hold the lock
     * @param display formats an instant for the page; null for no {@code expiresAtText}
     * @return the answer of {@link #extend(String, String, String, String)}, with the texts
     */
    public ResponseEntity<?> extend(
            String lockId, String type, String id, String owner, @Nullable Function<Instant, String> display) {
        return extend(lockId, type, id, owner, display, null);
    }

    /**
     * {@link #extend(String, String, String, String, Function)}, and a hover title for each time shown:
     * {@code "expiresAtTitle"} (and {@code "endedAtTitle"} beside {@code "endedAtText"}) is
     * {@code title.apply(instant)}, left out where that is null (e.g. the time in UTC, except for a viewer
     * whose times are UTC already). {@code heartbeat.js} shows each such time as
     * {@code <time datetime="…" title="…">text</time>}.
     *
     * @param lockId  the lock id the page carries, as text; null or blank answers 400
     * @param type    the locked resource's type, e.g. {@code purchase_order}
     * @param id      the locked resource's id
     * @param owner   the signed-in user, who must hold the lock
     * @param display formats an instant for the page; null for no {@code expiresAtText}/{@code endedAtText}
     * @param title   the hover title of an instant, or null for none; null for no titles at all
     * @return the answer of {@link #extend(String, String, String, String, Function)}, with the titles
     */
    public ResponseEntity<?> extend(
            String lockId,
            String type,
            String id,
            String owner,
            @Nullable Function<Instant, String> display,
            @Nullable Function<Instant, @Nullable String> title) {
        Optional<LockId> parsed = lockId == null ? Optional.empty() : LockId.tryParse(lockId.strip());
        if (parsed.isEmpty()) {
            return problem(LockProblem.badLockId(lockId == null || lockId.isBlank()), display, title);
        }
        try {
            locks.checkLock(parsed.get(), type, id, owner);
            locks.extendLockExpiration(parsed.get(), owner, interval);
        } catch (LockNotHeldException e) {
            return problem(LockProblem.of(e), display, title);
        } catch (OfflineLockLostException e) { // the starter's lock manager says it the Spring way
            return problem(LockProblem.of(e.getCause()), display, title);
        }
        Optional<LockStatus> status = status(type, id).filter(s -> owner.equals(s.owner()));
        if (status.isEmpty()) { // ended between the extension and this read: the store tells how
            try {
                locks.checkLock(parsed.get(), type, id, owner);
            } catch (LockNotHeldException e) {
                return problem(LockProblem.of(e), display, title);
            } catch (OfflineLockLostException e) {
                return problem(LockProblem.of(e.getCause()), display, title);
            }
            return problem(LockProblem.of(new LockNotHeldException()), display, title);
        }
        Instant expiresAt = status.get().expiresAt();
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("held", true);
        body.put("owner", owner);
        body.put("expiresAt", expiresAt.toString());
        if (display != null) {
            body.put("expiresAtText", display.apply(expiresAt));
        }
        String expiresAtTitle = title == null ? null : title.apply(expiresAt);
        if (expiresAtTitle != null) {
            body.put("expiresAtTitle", expiresAtTitle);
        }
        body.put("secondsLeft", status.get().secondsLeft());
        body.put("intervalSeconds", interval.toSeconds());
        return ResponseEntity.ok()
                .contentType(MediaType.APPLICATION_JSON)
                .cacheControl(CacheControl.noStore())
                .body(body);
    }

    private static ResponseEntity<ProblemDetail> problem(
            LockProblem problem,
            @Nullable Function<Instant, String> display,
            @Nullable Function<Instant, @Nullable String> title) {
        ProblemDetail body = problem.problemDetail();
        body.setProperty("held", false);
        Instant endedAt = problem.endedAt();
        if (endedAt != null && display != null) {
            body.setProperty("endedAtText", display.apply(endedAt));
            String endedAtTitle = title == null ? null : title.apply(endedAt);
            if (endedAtTitle != null) {
                body.setProperty("endedAtTitle", endedAtTitle);
            }
        }
        return ProblemPage.asJson(problem.getStatusCode(), body);
    }

    private Instant databaseNow() {
        try (Connection c = dataSource.getConnection()) {
            return store.dialect().now(c);
        } catch (SQLException e) {
            throw Failures.database("reading the database time", e);
        }
    }

    /**
     * A live lock as an edit page shows it.
     *
     * @param owner       null for a lock taken without an owner
     * @param secondsLeft seconds until {@code expiresAt}, by database time
     */
    public record LockStatus(String owner, Instant acquiredAt, Instant expiresAt, long secondsLeft) {}
}
