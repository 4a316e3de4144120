package dev.holdfast.optimistic;

import dev.holdfast.DatabaseException;
import dev.holdfast.internal.Arguments;
import dev.holdfast.internal.Failures;
import dev.holdfast.jdbc.SqlIdentifier;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.jdbc.internal.Keys;
import dev.holdfast.pessimistic.RowRef;
import org.jspecify.annotations.Nullable;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * Optimistic locking of the rows of one table by a version column: every write is conditional on
 * the version the caller read, increments it, and records who wrote and when (database time).
 *
 * <pre>{@code
 * VersionedTable orders = VersionedTable.builder("purchase_order").entity("order").idColumn("order_no").dialect(dialect).build();
 * long newVersion = orders.update(connection, 42L, 6, "kim", Assignments.of("street", "Main 1"));
 * }</pre>
 *
 * <p>The table needs, beside its key, the columns {@code version} (BIGINT), {@code modified_by}
 * (VARCHAR) and {@code modified} (PostgreSQL {@code timestamptz}, H2 {@code TIMESTAMP WITH TIME
 * ZONE}, MariaDB {@code DATETIME(6)} holding UTC); their names are configurable. On H2 the clock
 * function must exist ({@link dev.holdfast.jdbc.SchemaInstaller#installClock()}).
 *
 * <p>Writes run in the caller's transaction (or auto-commit). A stale version raises
 * {@link VersionConflictException} after one more SELECT that finds out why, and leaves the
 * transaction as it was (nothing was written). Any other SQL failure rolls a non-auto-commit
 * transaction back and raises {@link DatabaseException}, so that no later {@code commit()} can keep
 * half of the work (PostgreSQL would accept it silently). Bad arguments raise
 * {@link IllegalArgumentException} before any SQL runs.
 *
 * <p>At REPEATABLE READ or SERIALIZABLE, PostgreSQL itself refuses an update of a row changed since
 * the transaction's snapshot (SQLState 40001); that surfaces as {@link DatabaseException} with the
 * transaction rolled back. Use READ COMMITTED (the default) to get the explained conflict.
 *
 * <p>Keys may be {@link Long} (any integral type is widened), {@link String}, {@link UUID} or
 * {@link BigDecimal}. Immutable and thread-safe.
 */
public final class VersionedTable {

    private final Dialect dialect;
    private final SqlIdentifier table;
    private final SqlIdentifier idColumn;
    private final String entity;
    private final Set<String> reserved;
    private final VersionedSql sql;

    private VersionedTable(Builder b, Dialect dialect) {
        this.dialect = Arguments.notNull(dialect, "dialect");
        this.table = b.table;
        this.idColumn = b.id;
        this.entity = b.entity == null ? b.table.value() : b.entity;
        this.reserved = Set.of(lower(b.id), lower(b.version), lower(b.modifiedBy), lower(b.modified));
        if (reserved.size() != 4) {
            throw new IllegalArgumentException("id, version, modified-by and modified columns must differ");
        }
        this.sql = new VersionedSql(dialect, b.table, b.id, b.version, b.modifiedBy, b.modified);
    }

    private static String lower(SqlIdentifier id) {
        return id.value().toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * Starts configuring a versioned table; defaults: columns {@code id, version, modified_by, modified}.
     *
     * @param table the table's name: a plain identifier, optionally schema-qualified (see {@link SqlIdentifier})
     * @return a new builder
     * @throws IllegalArgumentException if {@code table} is null or not a plain identifier
     */
    public static Builder builder(String table) {
        return new Builder(SqlIdentifier.of(table));
    }

    /** {@return the table's name, schema-qualified if it was given so} */
    public SqlIdentifier table() {
        return table;
    }

    /** {@return the key column} */
    public SqlIdentifier idColumn() {
        return idColumn;
    }

    /**
     * The row of this table with key {@code id}, as row locks and business transactions name it.
     *
     * @param id the row's key, as {@link #key(Object)} takes it
     * @return the row
     * @throws IllegalArgumentException if {@code id} is not a valid key (see {@link #key(Object)})
     */
    public RowRef row(Object id) {
        return new RowRef(table, idColumn, key(id));
    }

    /** {@return the word used for its rows in messages, e.g. {@code "order"}; the table name unless configured} */
    public String entity() {
        return entity;
    }

    /** {@return the database the table is in, as configured} */
    public Dialect dialect() {
        return dialect;
    }

    /**
     * Updates one row if it still has {@code expectedVersion}: sets {@code changes}, increments the
     * version, sets {@code modified_by} and {@code modified} (database time). One statement when it
     * succeeds.
     *
     * @param connection      the connection whose transaction the update runs in (or auto-commit); not null
     * @param id              the row's key, as {@link #key(Object)} takes it
     * @param expectedVersion the version the caller read; not negative
     * @param modifiedBy      who writes, stored in the {@code modified_by} column; not null or blank
     * @param changes         the caller's columns; {@link Assignments#none()} only bumps the version
     * @return the row's new version, {@code expectedVersion + 1}
     * @throws VersionConflictException if the row has another version or no longer exists
     * @throws IllegalArgumentException for a null, negative or unsupported argument, or an
     *                                  assignment to the key or a version column
     * @throws DatabaseException        for any other SQL failure; a transaction is then rolled back
     */
    public long update(Connection connection, Object id, long expectedVersion, String modifiedBy, Assignments changes) {
        Object key = key(id);
        requireArguments(connection, expectedVersion);
        if (modifiedBy == null || modifiedBy.isBlank()) {
            throw new IllegalArgumentException("modifiedBy must not be null or blank");
        }
        Arguments.notNull(changes, "changes");
        for (SqlIdentifier column : changes.columns()) {
            if (reserved.contains(lower(column))) {
                throw new IllegalArgumentException("column '" + column + "' is managed by the versioned update");
            }
        }
        int updated;
        try (PreparedStatement ps = connection.prepareStatement(sql.update(changes))) {
            int i = 1;
            for (Object value : changes.values()) {
                ps.setObject(i++, value);
            }
            ps.setString(i++, modifiedBy);
            ps.setObject(i++, key);
            ps.setLong(i, expectedVersion);
            updated = ps.executeUpdate();
        } catch (SQLException e) {
            throw failure(connection, "updating " + entity + " " + key, e);
        }
        if (updated == 0) {
            throw new VersionConflictException(explain(connection, key, expectedVersion));
        }
        return expectedVersion + 1;
    }

    /**
     * Deletes one row if it still has {@code expectedVersion}. One statement when it succeeds.
     *
     * @param connection      the connection whose transaction the delete runs in (or auto-commit); not null
     * @param id              the row's key, as {@link #key(Object)} takes it
     * @param expectedVersion the version the caller read; not negative
     * @throws VersionConflictException if the row has another version or no longer exists
     * @throws IllegalArgumentException for a null connection, a negative version or an invalid key
     * @throws DatabaseException        for any other SQL failure; a transaction is then rolled back
     */
    public void delete(Connection connection, Object id, long expectedVersion) {
        Object key = key(id);
        requireArguments(connection, expectedVersion);
        int deleted;
        try (PreparedStatement ps = connection.prepareStatement(sql.delete())) {
            ps.setObject(1, key);
            ps.setLong(2, expectedVersion);
            deleted = ps.executeUpdate();
        } catch (SQLException e) {
            throw failure(connection, "deleting " + entity + " " + key, e);
        }
        if (deleted == 0) {
            throw new VersionConflictException(explain(connection, key, expectedVersion));
        }
    }

    /**
     * Reads the row's current stamp. One plain SELECT; takes no lock.
     *
     * @param connection the connection to read on, in its transaction if it has one; not null
     * @param id         the row's key, as {@link #key(Object)} takes it
     * @return the row's stamp, or empty if there is no such row
     * @throws IllegalArgumentException for a null connection or an invalid key
     * @throws DatabaseException        if the SELECT fails; a transaction is then rolled back
     */
    public Optional<VersionStamp> read(Connection connection, Object id) {
        Object key = key(id);
        requireArguments(connection, 0);
        return select(connection, sql.read(), key);
    }

    /**
     * The client-carried version check, one SELECT, before any work: returns the row's stamp if it
     * has {@code clientVersion}, and otherwise refuses. Takes no lock: a later write still needs its
     * own version check.
     *
     * @param connection    the connection to read on, in its transaction if it has one; not null
     * @param id            the row's key, as {@link #key(Object)} takes it
     * @param clientVersion the version the client says it had; not negative
     * @return the row's stamp, whose version is {@code clientVersion}
     * @throws VersionConflictException if the row has another version or no longer exists
     * @throws IllegalArgumentException for a null connection, a negative version or an invalid key
     * @throws DatabaseException        if the SELECT fails; a transaction is then rolled back
     */
    public VersionStamp matchVersion(Connection connection, Object id, long clientVersion) {
        Object key = key(id);
        requireArguments(connection, clientVersion);
        return check(connection, sql.read(), key, clientVersion);
    }

    /**
     * Verifies that a row the caller only read still has {@code expectedVersion}, and keeps it so
     * until the caller's transaction ends (a shared row lock; exclusive on H2, which has no shared
     * row locks). This is the read-set check of an optimistic offline lock: it refuses an
     * inconsistent read.
     *
     * @param connection      the connection of the caller's transaction; not null, not in auto-commit mode
     * @param id              the row's key, as {@link #key(Object)} takes it
     * @param expectedVersion the version the caller read; not negative
     * @return the row's stamp, whose version is {@code expectedVersion}
     * @throws VersionConflictException if the row has another version or no longer exists
     * @throws IllegalStateException    if the connection is in auto-commit mode (the lock would end at once)
     * @throws IllegalArgumentException for a null connection, a negative version or an invalid key
     * @throws DatabaseException        if the SELECT fails (a lock wait that runs out included); the
     *                                  transaction is then rolled back
     */
    public VersionStamp verifyUnchanged(Connection connection, Object id, long expectedVersion) {
        Object key = key(id);
        requireArguments(connection, expectedVersion);
        try {
            if (connection.getAutoCommit()) {
                throw new IllegalStateException(
                        "verifyUnchanged needs a transaction: the connection is in auto-commit mode");
            }
        } catch (SQLException e) {
            throw Failures.database("reading the auto-commit mode", e);
        }
        return check(connection, sql.verify(), key, expectedVersion);
    }

    private VersionStamp check(Connection connection, String query, Object key, long expected) {
        Optional<VersionStamp> stamp = select(connection, query, key);
        if (stamp.isEmpty()) {
            throw new VersionConflictException(StaleRow.deleted(entity, key, expected));
        }
        VersionConflictException.requireVersion(stamp.get(), entity, key, expected);
        return stamp.get();
    }

    private StaleRow explain(Connection connection, Object key, long expected) {
        return select(connection, sql.explain(), key)
                .map(stamp -> StaleRow.changed(entity, key, expected, stamp))
                .orElseGet(() -> StaleRow.deleted(entity, key, expected));
    }

    private Optional<VersionStamp> select(Connection connection, String query, Object key) {
        try (PreparedStatement ps = connection.prepareStatement(query)) {
            ps.setObject(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                return Optional.of(new VersionStamp(rs.getLong(1), rs.getString(2), dialect.readInstant(rs, 3)));
            }
        } catch (SQLException e) {
            throw failure(connection, "reading the version of " + entity + " " + key, e);
        }
    }

    private static DatabaseException failure(Connection connection, String what, SQLException e) {
        try {
            if (!connection.getAutoCommit()) {
                connection.rollback();
                what += " (transaction rolled back)";
            }
        } catch (SQLException rollback) {
            e.addSuppressed(rollback);
        }
        return Failures.database(what, e);
    }

    private static void requireArguments(Connection connection, long version) {
        if (connection == null) {
            throw new IllegalArgumentException("connection must not be null");
        }
        if (version < 0) {
            throw new IllegalArgumentException("a version must not be negative, was " + version);
        }
    }

    /**
     * The key as this table binds it: integral numbers become {@link Long}; {@link String},
     * {@link UUID} and {@link BigDecimal} stay as they are.
     *
     * @param id the key: a {@link String}, an integral number ({@link Long}, {@link Integer},
     *           {@link Short}, {@link Byte}, or a {@link BigInteger} within {@code long}), a {@link UUID} or a
     *           {@link BigDecimal}
     * @return the key in that form
     * @throws IllegalArgumentException for null, a blank or over-long (1024) string, a {@link BigInteger}
     *                                  beyond {@code long}, or another type
     */
    public static Object key(Object id) {
        return Keys.normalize("id", id);
    }

    @Override
    public String toString() {
        return "VersionedTable[" + table + " as " + entity + "]";
    }

    /** Configures a {@link VersionedTable}. */
    public static final class Builder {
        private final SqlIdentifier table;
        private @Nullable String entity;
        private SqlIdentifier id = SqlIdentifier.unqualified("id");
        private SqlIdentifier version = SqlIdentifier.unqualified("version");
        private SqlIdentifier modifiedBy = SqlIdentifier.unqualified("modified_by");
        private SqlIdentifier modified = SqlIdentifier.unqualified("modified");
        private @Nullable Dialect dialect;

        private Builder(SqlIdentifier table) {
            this.table = table;
        }

        /**
         * Sets the word for a row in messages, e.g. {@code "order"} (default: the table name).
         *
         * @param entity the word, 1 to 64 characters, not blank
         * @return this builder
         * @throws IllegalArgumentException if {@code entity} is null, blank or longer than 64 characters
         */
        public Builder entity(String entity) {
            if (entity == null || entity.isBlank() || entity.length() > 64) {
                throw new IllegalArgumentException("entity must be 1 to 64 characters and not blank");
            }
            this.entity = entity;
            return this;
        }

        /**
         * Sets the name of the key column, which must be unique (default {@code id}).
         *
         * @param column a plain unqualified identifier (see {@link SqlIdentifier})
         * @return this builder
         * @throws IllegalArgumentException if {@code column} is null, not a plain identifier, or schema-qualified
         */
        public Builder idColumn(String column) {
            this.id = SqlIdentifier.unqualified(column);
            return this;
        }

        /**
         * Sets the name of the version column, a {@code BIGINT} that every write increments (default
         * {@code version}).
         *
         * @param column a plain unqualified identifier (see {@link SqlIdentifier})
         * @return this builder
         * @throws IllegalArgumentException if {@code column} is null, not a plain identifier, or schema-qualified
         */
        public Builder versionColumn(String column) {
            this.version = SqlIdentifier.unqualified(column);
            return this;
        }

        /**
         * Sets the name of the column that records who wrote last, a {@code VARCHAR} (default
         * {@code modified_by}).
         *
         * @param column a plain unqualified identifier (see {@link SqlIdentifier})
         * @return this builder
         * @throws IllegalArgumentException if {@code column} is null, not a plain identifier, or schema-qualified
         */
        public Builder modifiedByColumn(String column) {
            this.modifiedBy = SqlIdentifier.unqualified(column);
            return this;
        }

        /**
         * Sets the name of the column that records when the row was written last, in database time
         * (default {@code modified}).
         *
         * @param column a plain unqualified identifier (see {@link SqlIdentifier})
         * @return this builder
         * @throws IllegalArgumentException if {@code column} is null, not a plain identifier, or schema-qualified
         */
        public Builder modifiedColumn(String column) {
            this.modified = SqlIdentifier.unqualified(column);
            return this;
        }

        /**
         * Sets the table's database (required: a versioned table has no data source to detect it from).
         *
         * @param dialect the database's dialect; not null
         * @return this builder
         * @throws IllegalArgumentException if {@code dialect} is null
         */
        public Builder dialect(Dialect dialect) {
            this.dialect = Arguments.notNull(dialect, "dialect");
            return this;
        }

        /**
         * Builds the versioned table. Runs no SQL: whether the table and its columns exist shows at the
         * first statement.
         *
         * @return the versioned table
         * @throws IllegalStateException    if no {@link #dialect(Dialect) dialect} was set
         * @throws IllegalArgumentException if the key, version, modified-by and modified columns are not four
         *                                  different names (compared without regard to case)
         */
        public VersionedTable build() {
            if (dialect == null) {
                throw new IllegalStateException("a VersionedTable needs its dialect: call dialect(..) before build()");
            }
            return new VersionedTable(this, dialect);
        }
    }
}
