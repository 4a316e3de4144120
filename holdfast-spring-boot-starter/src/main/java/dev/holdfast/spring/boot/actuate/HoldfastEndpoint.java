package dev.holdfast.spring.boot.actuate;

import dev.holdfast.DatabaseException;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.lease.LeaseView;
import dev.holdfast.lease.LeaseWaiter;
import dev.holdfast.pessimistic.Blocker;
import dev.holdfast.pessimistic.Blockers;
import dev.holdfast.pessimistic.RowLockWait;
import dev.holdfast.pessimistic.RowLockWaits;
import dev.holdfast.pessimistic.offline.HeldLock;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpoint;

import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.function.Function;

/**
 * The Actuator endpoint {@code holdfast} (web only): what Holdfast holds and who waits, for
 * operators, and force-releases naming the operator.
 *
 * <ul>
 *   <li>{@code GET /actuator/holdfast[?limit=n]}: the first page of each section;</li>
 *   <li>{@code GET /actuator/holdfast/{section}[?limit=n][&after=cursor]}, sections {@code locks}
 *       (also {@code type=}, {@code owner=}), {@code leases}, {@code lease-waiters} (also
 *       {@code name=}) and {@code row-lock-waits};</li>
 *   <li>{@code DELETE /actuator/holdfast/locks?type=t&id=i} and
 *       {@code DELETE /actuator/holdfast/leases?name=n}: force-release, by the request's principal.</li>
 * </ul>
 *
 * <p>The force-releases are off by default ({@link Access#READ_ONLY}, as Boot's own destructive
 * operations): {@code management.endpoint.holdfast.access=unrestricted} turns them on. Even then a
 * request without an authenticated principal is refused with 403 and changes nothing, so every
 * force-release names who did it; protect the endpoint with Spring Security (or the container's
 * authentication) before turning the writes on.
 *
 * <p>Every page holds at most {@code limit} items ({@value #DEFAULT_LIMIT} unless asked, at most
 * {@value #MAX_LIMIT}; row-lock waits at most {@value #MAX_ROW_LOCK_WAITS}, as each costs a query);
 * {@code more} says whether there are more, and {@code next} is the cursor to pass as {@code after}
 * for the next page. Bad input answers 400, an unknown section or a lock or lease that is not live
 * 404, and changes nothing.
 */
@WebEndpoint(id = "holdfast", defaultAccess = Access.READ_ONLY)
public class HoldfastEndpoint {

    /** Items per page unless {@code limit} says otherwise. */
    public static final int DEFAULT_LIMIT = 50;
    /** The most items per page. */
    public static final int MAX_LIMIT = 1000;
    /** The most row-lock waits per page (each is read with a query of its own). */
    public static final int MAX_ROW_LOCK_WAITS = 50;

    static final String LOCKS = "locks";
    static final String LEASES = "leases";
    static final String LEASE_WAITERS = "lease-waiters";
    static final String ROW_LOCK_WAITS = "row-lock-waits";

    private final @Nullable JdbcLockManager locks;
    private final @Nullable LeaseService leases;
    private final @Nullable LeaseView leaseView;
    private final @Nullable RowLockWaits rowLockWaits;

    /**
     * @param locks        the offline locks, or null for none
     * @param leases       the lease service (for force-releases), or null for none
     * @param leaseView    its view (live leases, waiters), or null for none
     * @param rowLockWaits the lock waits of the database, or null for none
     */
    public HoldfastEndpoint(
            @Nullable JdbcLockManager locks,
            @Nullable LeaseService leases,
            @Nullable LeaseView leaseView,
            @Nullable RowLockWaits rowLockWaits) {
        this.locks = locks;
        this.leases = leases;
        this.leaseView = leaseView;
        this.rowLockWaits = rowLockWaits;
    }

    /** A live offline lock (without its lock id, which is a capability). */
    public record LockItem(String type, String id, @Nullable String owner, Instant acquiredAt, Instant expiresAt) {}

    /** A live lease. */
    public record LeaseItem(String name, String holder, long token, Instant acquiredAt, Instant expiresAt) {}

    /** A waiter of a lease's queue (see {@link LeaseWaiter}). */
    public record WaiterItem(
            String lease,
            int place,
            @Nullable String owner,
            @Nullable Instant queuedAt,
            Instant waitsUntil) {}

    /** A session that blocks a wait (see {@link Blocker}). */
    public record BlockerItem(
            String session,
            String blocks,
            @Nullable String user,
            @Nullable String application,
            @Nullable String client,
            @Nullable Instant transactionStart,
            @Nullable String state,
            @Nullable String statement) {}

    /** A session waiting for a lock now, with its blockers (see {@link RowLockWait}). */
    public record RowLockWaitItem(
            String session,
            @Nullable String user,
            @Nullable String application,
            @Nullable String client,
            @Nullable Instant waitingSince,
            @Nullable String state,
            @Nullable String statement,
            List<BlockerItem> blockers,
            int moreBlockers,
            @Nullable String blockersUnknownBecause) {}

    /**
     * One page of a section.
     *
     * @param items the items, at most {@code limit}
     * @param limit the most items this page could hold
     * @param more  whether there are more items than this page holds
     * @param next  the cursor of the next page (pass it as {@code after}); null without more, and for
     *              row-lock waits, which change too fast to page through
     * @param error why the section could not be read (then {@code items} is empty); null if it was
     */
    public record Page<T>(
            List<T> items,
            int limit,
            boolean more,
            @Nullable String next,
            @Nullable String error) {}

    /** Every section's first page; a section whose part of Holdfast is not configured is null. */
    public record Overview(
            @Nullable Page<LockItem> locks,
            @Nullable Page<LeaseItem> leases,
            @Nullable Page<WaiterItem> leaseWaiters,
            @Nullable Page<RowLockWaitItem> rowLockWaits) {}

    /** The answer to a force-release. */
    public record Released(
            String section,
            @Nullable String type,
            @Nullable String id,
            @Nullable String name,
            String by) {}

    /** What a refused request gets, with its 4xx status. */
    public record Refusal(String error) {}

    /** A request the endpoint refuses, with its status. */
    private static final class Refused extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final int status;

        Refused(int status, String message) {
            super(message, null, false, false);
            this.status = status;
        }
    }

    /**
     * {@code GET /actuator/holdfast}: the first page of every section.
     *
     * @param limit the most items per section, 1 to {@value #MAX_LIMIT} (row-lock waits at most
     *              {@value #MAX_ROW_LOCK_WAITS}); null for {@value #DEFAULT_LIMIT}
     * @return 200 with the {@link Overview}, where a section that could not be read has its error instead of
     *         items; 400 with a {@link Refusal} for a limit out of range
     */
    @ReadOperation
    public WebEndpointResponse<Object> overview(@Nullable Integer limit) {
        try {
            int n = limit(limit, MAX_LIMIT);
            return new WebEndpointResponse<>(new Overview(
                    locks == null ? null : readSafely(() -> locksPage(locks, null, null, null, n)),
                    leaseView == null ? null : readSafely(() -> leasesPage(leaseView, null, n)),
                    leaseView == null ? null : readSafely(() -> waitersPage(leaseView, null, null, n)),
                    rowLockWaits == null
                            ? null
                            : readSafely(() -> rowLockWaitsPage(rowLockWaits, Math.min(n, MAX_ROW_LOCK_WAITS)))));
        } catch (Refused r) {
            return refusal(r);
        }
    }

    /**
     * {@code GET /actuator/holdfast/{section}}: one page of one section.
     *
     * @param section {@code locks}, {@code leases}, {@code lease-waiters} or {@code row-lock-waits}
     * @param limit   the most items, 1 to {@value #MAX_LIMIT} (to {@value #MAX_ROW_LOCK_WAITS} for row-lock waits);
     *                null for {@value #DEFAULT_LIMIT}
     * @param after   the previous page's {@code next} cursor, or null for the first page; refused for row-lock waits
     * @param type    locks only: only locks of this type, or null for all
     * @param owner   locks only: only locks of this owner, or null for all
     * @param name    lease waiters only: only the waiters of this lease, or null for all
     * @return 200 with the {@link Page}; 400 with a {@link Refusal} for bad input, 404 for an unknown section or
     *         one whose part of Holdfast is not configured
     */
    @ReadOperation
    public WebEndpointResponse<Object> section(
            @Selector String section,
            @Nullable Integer limit,
            @Nullable String after,
            @Nullable String type,
            @Nullable String owner,
            @Nullable String name) {
        try {
            return new WebEndpointResponse<>(
                    switch (section) {
                        case LOCKS -> locksPage(require(locks, section), type, owner, after, limit(limit, MAX_LIMIT));
                        case LEASES -> leasesPage(require(leaseView, section), after, limit(limit, MAX_LIMIT));
                        case LEASE_WAITERS ->
                            waitersPage(require(leaseView, section), name, after, limit(limit, MAX_LIMIT));
                        case ROW_LOCK_WAITS -> {
                            if (after != null) {
                                throw new Refused(400, "row-lock waits have no further pages: they change too fast");
                            }
                            yield rowLockWaitsPage(require(rowLockWaits, section), limit(limit, MAX_ROW_LOCK_WAITS));
                        }
                        default -> throw unknownSection(section);
                    });
        } catch (Refused r) {
            return refusal(r);
        }
    }

    /**
     * {@code DELETE /actuator/holdfast/locks?type=&id=} or {@code /leases?name=}: breaks a live
     * offline lock or lease whoever holds it, naming the request's principal as the operator (the
     * holder is told who broke it). 404, changing nothing, if it is not live; 403, changing nothing,
     * without an authenticated principal: a lease broken by nobody in particular could not be traced.
     *
     * @param section  {@code locks} or {@code leases}
     * @param type     locks: the locked resource's type
     * @param id       locks: the locked resource's id
     * @param name     leases: the lease's name
     * @param security the request's security context; its principal's name is recorded as the operator
     * @return 200 with what was {@link Released}; with a {@link Refusal}: 403 without an authenticated principal,
     *         400 for a missing or invalid argument or a section that cannot be force-released, 404 for an unknown
     *         or not configured section or a lock or lease that is not live
     */
    @DeleteOperation
    public WebEndpointResponse<Object> forceRelease(
            @Selector String section,
            @Nullable String type,
            @Nullable String id,
            @Nullable String name,
            SecurityContext security) {
        Principal principal = security.getPrincipal();
        try {
            if (principal == null
                    || principal.getName() == null
                    || principal.getName().isBlank()) {
                throw new Refused(
                        403,
                        "a force-release needs an authenticated principal, to record who did it;"
                                + " sign the request in (Spring Security, or the container's authentication)");
            }
            String by = principal.getName();
            switch (section) {
                case LOCKS -> {
                    JdbcLockManager l = require(locks, section);
                    String t = present(type, "type");
                    String i = present(id, "id");
                    boolean broken = checked(() -> l.forceRelease(t, i, by));
                    if (!broken) {
                        throw new Refused(404, "no live lock on " + t + " " + i);
                    }
                    return new WebEndpointResponse<>(new Released(section, t, i, null, by));
                }
                case LEASES -> {
                    LeaseService l = require(leases, section);
                    String n = present(name, "name");
                    boolean broken = checked(() -> l.forceRelease(n, by));
                    if (!broken) {
                        throw new Refused(404, "no live lease " + n);
                    }
                    return new WebEndpointResponse<>(new Released(section, null, null, n, by));
                }
                case LEASE_WAITERS, ROW_LOCK_WAITS ->
                    throw new Refused(400, "only locks and leases can be force-released, not " + section);
                default -> throw unknownSection(section);
            }
        } catch (Refused r) {
            return refusal(r);
        }
    }

    private static Page<LockItem> locksPage(
            JdbcLockManager locks, @Nullable String type, @Nullable String owner, @Nullable String after, int limit) {
        String afterType = null;
        String afterId = null;
        if (after != null) {
            String[] parts = decode(after).split("\n", 2);
            if (parts.length != 2) {
                throw new Refused(400, "after is not a cursor of this section");
            }
            afterType = parts[0];
            afterId = parts[1];
        }
        String t = afterType;
        String i = afterId;
        List<HeldLock> found = checked(() -> locks.heldLocksAfter(type, owner, t, i, limit + 1));
        return page(
                found,
                limit,
                l -> new LockItem(l.type(), l.id(), l.owner(), l.acquiredAt(), l.expiresAt()),
                l -> encode(l.type() + "\n" + l.id()));
    }

    private static Page<LeaseItem> leasesPage(LeaseView view, @Nullable String after, int limit) {
        String afterName = after == null ? null : decode(after);
        List<Lease> found = checked(() -> view.live(afterName, limit + 1));
        return page(
                found,
                limit,
                l -> new LeaseItem(l.name(), l.owner(), l.token(), l.acquiredAt(), l.expiresAt()),
                l -> encode(l.name()));
    }

    private static Page<WaiterItem> waitersPage(
            LeaseView view, @Nullable String name, @Nullable String after, int limit) {
        String afterName = null;
        int afterPlace = 0;
        if (after != null) {
            String cursor = decode(after);
            int cut = cursor.lastIndexOf('\n');
            try {
                afterPlace = Integer.parseInt(cursor.substring(cut + 1));
            } catch (NumberFormatException e) {
                throw new Refused(400, "after is not a cursor of this section");
            }
            if (cut < 1) {
                throw new Refused(400, "after is not a cursor of this section");
            }
            afterName = cursor.substring(0, cut);
        }
        String n = afterName;
        int p = afterPlace;
        List<LeaseWaiter> found = checked(() -> view.waiters(name, n, p, limit + 1));
        return page(
                found,
                limit,
                w -> new WaiterItem(w.name(), w.place(), w.owner(), w.queuedAt(), w.waitsUntil()),
                w -> encode(w.name() + "\n" + w.place()));
    }

    private static Page<RowLockWaitItem> rowLockWaitsPage(RowLockWaits waits, int limit) {
        List<RowLockWait> found = checked(() -> waits.list(limit + 1));
        Page<RowLockWaitItem> page = page(found, limit, HoldfastEndpoint::rowLockWait, w -> "");
        return new Page<>(page.items(), limit, page.more(), null, null);
    }

    private static RowLockWaitItem rowLockWait(RowLockWait w) {
        Blockers b = w.blockers();
        List<BlockerItem> blockers = b.sessions().stream()
                .map(s -> new BlockerItem(
                        s.sessionId(),
                        s.blocks(),
                        s.user(),
                        s.applicationName(),
                        s.clientAddress(),
                        s.transactionStart(),
                        s.state(),
                        s.statement()))
                .toList();
        return new RowLockWaitItem(
                w.sessionId(),
                w.user(),
                w.applicationName(),
                w.clientAddress(),
                w.waitingSince(),
                w.state(),
                w.statement(),
                blockers,
                b.omitted(),
                b.unknownBecause());
    }

    /** The first {@code limit} of {@code found} (read with one more, to tell whether there are more). */
    private static <R, T> Page<T> page(List<R> found, int limit, Function<R, T> item, Function<R, String> cursor) {
        boolean more = found.size() > limit;
        List<R> kept = more ? found.subList(0, limit) : found;
        String next = more ? cursor.apply(kept.get(kept.size() - 1)) : null;
        return new Page<>(kept.stream().map(item).toList(), limit, more, next, null);
    }

    /** A section of the overview, or its error: one failing section does not hide the others. */
    private static <T> Page<T> readSafely(java.util.function.Supplier<Page<T>> read) {
        try {
            return read.get();
        } catch (Refused | DatabaseException e) {
            return new Page<>(List.of(), 0, false, null, e.getMessage());
        }
    }

    /** Runs a Holdfast call; its bad-argument refusal becomes a 400. */
    private static <T> T checked(java.util.function.Supplier<T> call) {
        try {
            return call.get();
        } catch (IllegalArgumentException e) {
            throw new Refused(400, e.getMessage() == null ? "bad argument" : e.getMessage());
        }
    }

    private static int limit(@Nullable Integer limit, int max) {
        if (limit == null) {
            return Math.min(DEFAULT_LIMIT, max);
        }
        if (limit < 1 || limit > max) {
            throw new Refused(400, "limit must be 1 to " + max + ", not " + limit);
        }
        return limit;
    }

    private static String present(@Nullable String value, String what) {
        if (value == null || value.isBlank()) {
            throw new Refused(400, what + " is missing");
        }
        return value;
    }

    private static <T> T require(@Nullable T part, String section) {
        if (part == null) {
            throw new Refused(404, "section " + section + " is not configured in this application");
        }
        return part;
    }

    private static Refused unknownSection(String section) {
        return new Refused(
                404,
                "no section " + section + "; there are " + LOCKS + ", " + LEASES + ", " + LEASE_WAITERS + " and "
                        + ROW_LOCK_WAITS);
    }

    private static String encode(String cursor) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(cursor.getBytes(StandardCharsets.UTF_8));
    }

    private static String decode(String cursor) {
        try {
            return new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new Refused(400, "after is not a cursor of this endpoint");
        }
    }

    private static WebEndpointResponse<Object> refusal(Refused r) {
        return new WebEndpointResponse<>(new Refusal(String.valueOf(r.getMessage())), r.status);
    }
}
