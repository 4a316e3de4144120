package dev.holdfast.spring.boot.observation;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * The observations Holdfast makes, with their names and keys. Every one has the low-cardinality keys
 * {@code holdfast.technique}, {@code holdfast.outcome} and {@code db.system} ({@code h2}, {@code postgresql},
 * {@code mariadb}), and the name of the lock only as the high-cardinality {@code holdfast.lock.name}. A timer from
 * Micrometer's meter handler adds {@code error} (the exception's simple name, or {@code none}). Each has a
 * {@code Default…ObservationConvention}, which a bean of its convention interface replaces.
 */
public enum HoldfastObservation implements ObservationDocumentation {

    /**
     * A pessimistic row lock ({@code PessimisticLocks.forUpdate}, each row of {@code forUpdateAll}, {@code JpaLocks}
     * given the locks), waiting included. Outcomes: {@code locked}, {@code absent} (no such row, or skipped),
     * {@code timeout} (the bound ran out, or no-wait found the row held), {@code deadlock}, {@code error}.
     */
    PESSIMISTIC_LOCK("holdfast.pessimistic.lock", Keys.TECHNIQUE, Keys.OUTCOME, Keys.DATABASE, Keys.TABLE, Keys.WAIT),

    /**
     * An offline lock taken ({@code LockManager.tryLock}, {@code reacquire}). Outcomes: {@code acquired},
     * {@code refused} (held by another, {@code AlreadyLockedException}), {@code error}.
     */
    OFFLINE_LOCK("holdfast.offline.lock", Keys.TECHNIQUE, Keys.OPERATION, Keys.OUTCOME, Keys.DATABASE, Keys.LOCK_TYPE),

    /**
     * A lease acquired ({@code Leases.tryAcquire}, {@code tryAcquireOrRenew}, and {@code acquire}, which waits).
     * Outcomes: {@code acquired}, {@code refused} (held), {@code timeout} (the wait's bound ran out),
     * {@code interrupted}, {@code error}; {@code holdfast.lease.grant} says how a grant came: {@code own_statement},
     * {@code handed_off} (a release handed it to the waiter, PostgreSQL), {@code passed_in_memory} (cohort
     * hand-off), or {@code none}.
     */
    LEASE_ACQUIRE("holdfast.lease.acquire", Keys.TECHNIQUE, Keys.OPERATION, Keys.OUTCOME, Keys.DATABASE, Keys.GRANT),

    /**
     * A version conflict found (one per stale row of a {@code VersionConflictException}): an event, timed as zero.
     * Outcomes: {@code changed}, {@code deleted}.
     */
    VERSION_CONFLICT("holdfast.version.conflict", Keys.TECHNIQUE, Keys.OUTCOME, Keys.DATABASE, Keys.ENTITY);

    private final String name;
    private final KeyName[] lowCardinality;

    HoldfastObservation(String name, KeyName... lowCardinality) {
        this.name = name;
        this.lowCardinality = lowCardinality;
    }

    @Override
    public String getName() {
        return name;
    }

    @Override
    public KeyName[] getLowCardinalityKeyNames() {
        return lowCardinality.clone();
    }

    @Override
    public KeyName[] getHighCardinalityKeyNames() {
        return new KeyName[] {Keys.LOCK_NAME};
    }

    /**
     * {@return the technique, the value of {@code holdfast.technique}: {@code pessimistic}, {@code offline},
     * {@code lease} or {@code optimistic}}
     */
    public String technique() {
        return switch (this) {
            case PESSIMISTIC_LOCK -> "pessimistic";
            case OFFLINE_LOCK -> "offline";
            case LEASE_ACQUIRE -> "lease";
            case VERSION_CONFLICT -> "optimistic";
        };
    }

    /** The keys of Holdfast's observations. */
    public enum Keys implements KeyName {
        /** {@code pessimistic}, {@code offline}, {@code lease} or {@code optimistic}. */
        TECHNIQUE("holdfast.technique"),
        /** How the call ended; the values are listed with each observation. */
        OUTCOME("holdfast.outcome"),
        /** The database: {@code h2}, {@code postgresql}, {@code mariadb}. */
        DATABASE("db.system"),
        /** The call: {@code try_lock}, {@code reacquire}; {@code try_acquire}, {@code try_acquire_or_renew}, {@code acquire}. */
        OPERATION("holdfast.operation"),
        /** The locked row's table, as the caller named it. */
        TABLE("holdfast.table"),
        /** How a row lock may wait: {@code bounded}, {@code no_wait}, {@code skip_locked}. */
        WAIT("holdfast.lock.wait"),
        /** The type of resource of an offline lock (e.g. {@code purchase_order}). */
        LOCK_TYPE("holdfast.lock.type"),
        /** How a lease grant reached its caller. */
        GRANT("holdfast.lease.grant"),
        /** The entity of a stale row. */
        ENTITY("holdfast.entity"),
        /**
         * High cardinality: the lock's name: the row ({@code table.column=key}), the offline lock's
         * {@code type:id}, the lease name, the stale row's {@code entity:id}.
         */
        LOCK_NAME("holdfast.lock.name");

        private final String key;

        Keys(String key) {
            this.key = key;
        }

        @Override
        public String asString() {
            return key;
        }
    }
}
