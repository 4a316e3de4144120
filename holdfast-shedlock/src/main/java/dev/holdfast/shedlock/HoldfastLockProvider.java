package dev.holdfast.shedlock;

import dev.holdfast.internal.Arguments;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseNotHeldException;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.lease.Leases;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

import java.net.InetAddress;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * A ShedLock {@link ExtensibleLockProvider} backed by Holdfast {@link Leases} (the JDBC
 * {@link LeaseService}, or any decorator of it). A ShedLock user switches by
 * replacing one bean:
 *
 * <pre>{@code
 * @Bean
 * LockProvider lockProvider(DataSource dataSource) {
 *     return HoldfastLockProvider.of(dataSource);   // closed with the context: it closes its LeaseService
 * }
 * }</pre>
 *
 * <p>or, with a {@link Leases} bean of your own (the starter's, for example), which stays yours to close:
 * {@code new HoldfastLockProvider(leases)}.
 *
 * <table>
 *   <caption>How ShedLock's terms map to a lease</caption>
 *   <tr><th>ShedLock</th><th>here</th></tr>
 *   <tr><td>{@code lock(config)}</td><td>one {@link Leases#tryAcquire} for {@code lockAtMostFor}, by
 *       database time (exclusive per call: a live lease refuses, whoever holds it); the configuration's
 *       {@code createdAt} (application clock) is ignored</td></tr>
 *   <tr><td>{@code unlock()}</td><td>one {@link Leases#release(Lease, Duration)}: the lease ends at the
 *       later of now and grant + {@code lockAtLeastFor}; if it had already expired, {@code unlock()} throws
 *       {@link dev.holdfast.lease.LeaseExpiredException} so the task's failure is logged, never silent</td></tr>
 *   <tr><td>{@code extend(atMost, atLeast)}</td><td>one {@link Leases#renew}, same token; empty if the lease
 *       was lost</td></tr>
 *   <tr><td>{@code locked_by}</td><td>owner {@code node/random}: unique per lock call, so two threads of one node
 *       never share a lock by re-entry</td></tr>
 * </table>
 *
 * <p>The fencing token of each execution is available from {@link HoldfastLock#lease()}.
 */
public final class HoldfastLockProvider implements ExtensibleLockProvider, AutoCloseable {

    private static final SecureRandom RANDOM = new SecureRandom();

    private final Leases leases;
    private final String node;
    private final boolean ownsLeases;

    /**
     * A provider whose owners start with this host's name and the JVM's process id. {@code leases}
     * stays the caller's: {@link #close()} leaves it open.
     *
     * @param leases the leases that back this provider's locks
     */
    public HoldfastLockProvider(Leases leases) {
        this(leases, defaultNode());
    }

    /**
     * A provider on {@code leases}, which stays the caller's: {@link #close()} leaves it open.
     *
     * @param leases the leases that back this provider's locks
     * @param node   how this server appears in owners (at most 160 characters)
     */
    public HoldfastLockProvider(Leases leases, String node) {
        this(leases, node, false);
    }

    private HoldfastLockProvider(Leases leases, String node, boolean ownsLeases) {
        this.leases = Arguments.notNull(leases, "leases");
        if (node == null || node.isBlank() || node.length() > 160) {
            throw new IllegalArgumentException("node must be 1 to 160 characters, not blank");
        }
        this.node = node;
        this.ownsLeases = ownsLeases;
    }

    /**
     * A provider on the default lease table of {@code dataSource}, with a {@link LeaseService} of its
     * own that {@link #close()} closes.
     *
     * @param dataSource the database whose lease table ({@code holdfast_leases}) holds the locks
     * @return a provider that owns its lease service
     */
    public static HoldfastLockProvider of(DataSource dataSource) {
        return new HoldfastLockProvider(LeaseService.builder(dataSource).build(), defaultNode(), true);
    }

    /**
     * Closes the {@link LeaseService} that {@link #of(DataSource)} created (its threads, and on
     * PostgreSQL its listener's connection); a {@link Leases} given to a constructor stays open. Spring
     * calls it when the context closes, for a bean of this type.
     */
    @Override
    public void close() {
        if (ownsLeases) {
            leases.close();
        }
    }

    /** The leases this provider takes its locks from. */
    Leases leases() {
        return leases;
    }

    @Override
    public Optional<SimpleLock> lock(LockConfiguration config) {
        String owner = node + "/" + HexFormat.of().formatHex(randomBytes());
        return leases.tryAcquire(config.getName(), owner, config.getLockAtMostFor())
                .map(lease -> new HoldfastLock(config, lease, leases));
    }

    private static byte[] randomBytes() {
        byte[] bytes = new byte[12];
        RANDOM.nextBytes(bytes);
        return bytes;
    }

    private static String defaultNode() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            host = "unknown-host";
        }
        String node = host + ":" + ProcessHandle.current().pid();
        return node.length() <= 160 ? node : node.substring(node.length() - 160);
    }

    /** One held ShedLock lock: a lease grant. */
    public static final class HoldfastLock extends AbstractSimpleLock {
        private final Lease lease;
        private final Leases leases;
        /** Minimum hold, measured from the grant's start (database time). */
        private final Duration heldAtLeast;

        HoldfastLock(LockConfiguration config, Lease lease, Leases leases) {
            this(config, lease, leases, config.getLockAtLeastFor());
        }

        private HoldfastLock(LockConfiguration config, Lease lease, Leases leases, Duration heldAtLeast) {
            super(config);
            this.lease = lease;
            this.leases = leases;
            this.heldAtLeast = heldAtLeast;
        }

        /**
         * The lease behind this lock, with its fencing token.
         *
         * @return the lease this lock holds
         */
        public Lease lease() {
            return lease;
        }

        @Override
        protected void doUnlock() {
            leases.release(lease, heldAtLeast);
        }

        @Override
        protected Optional<SimpleLock> doExtend(LockConfiguration newConfig) {
            try {
                Lease renewed = leases.renew(lease, newConfig.getLockAtMostFor());
                // The database's "now" at the extension is the new expiry minus the TTL; the minimum
                // hold then counts from there, as ShedLock's does from the extension.
                Instant extendedAt = renewed.expiresAt().minus(newConfig.getLockAtMostFor());
                Duration minimum =
                        Duration.between(renewed.acquiredAt(), extendedAt).plus(newConfig.getLockAtLeastFor());
                return Optional.of(new HoldfastLock(newConfig, renewed, leases, minimum));
            } catch (RuntimeException e) {
                // leases that translate their exceptions (the Spring starter's) give it as the cause
                if (e instanceof LeaseNotHeldException || e.getCause() instanceof LeaseNotHeldException) {
                    return Optional.empty();
                }
                throw e;
            }
        }
    }
}
