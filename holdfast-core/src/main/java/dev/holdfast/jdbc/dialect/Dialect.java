package dev.holdfast.jdbc.dialect;

import dev.holdfast.DatabaseException;
import dev.holdfast.internal.Arguments;
import dev.holdfast.internal.Failures;
import dev.holdfast.internal.Invariants;
import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Locale;
import javax.sql.DataSource;

/**
 * One supported database: how to classify its errors and how to read its clock. The SQL each
 * feature runs lives in that feature's package, one class per feature with one section per
 * dialect, chosen by {@code switch (dialect)}.
 *
 * <p>Timestamps Holdfast stores are absolute instants: {@code timestamptz} on PostgreSQL,
 * {@code TIMESTAMP WITH TIME ZONE} on H2 and UTC in {@code DATETIME(6)} on MariaDB (its
 * {@code TIMESTAMP} type ends in 2038). Use {@link #readInstant} to read them.
 */
public enum Dialect {

    /** H2 2.x, embedded. */
    H2("h2") {
        @Override
        SqlErrorKind classifyCode(String state, int code) {
            return switch (code) {
                case 50200 -> SqlErrorKind.LOCK_TIMEOUT; // LOCK_TIMEOUT_1, also NOWAIT
                case 40001 -> SqlErrorKind.DEADLOCK; // DEADLOCK_1
                case 23505 -> SqlErrorKind.UNIQUE_VIOLATION;
                case 57014 -> SqlErrorKind.STATEMENT_CANCELLED;
                case 90067, 90098, 90121 -> SqlErrorKind.CONNECTION_LOST; // broken, closed, closed by shutdown
                default -> classifyState(state);
            };
        }

        @Override
        public String clock() {
            // CURRENT_TIMESTAMP is fixed for the whole transaction on H2; this alias is not.
            return H2Clock.ALIAS + "()";
        }

        @Override
        public String plusMicros(String timestamp, String micros) {
            return "DATEADD(MICROSECOND, " + micros + ", " + timestamp + ")";
        }

        @Override
        public @Nullable Instant readInstant(ResultSet rs, int column) throws SQLException {
            OffsetDateTime value = rs.getObject(column, OffsetDateTime.class);
            return value == null ? null : value.toInstant();
        }
    },

    /** PostgreSQL 15 or newer. */
    POSTGRESQL("postgresql") {
        @Override
        SqlErrorKind classifyCode(String state, int code) {
            if (state == null) {
                return SqlErrorKind.OTHER;
            }
            return switch (state) {
                case "55P03" -> SqlErrorKind.LOCK_TIMEOUT; // lock_not_available, also NOWAIT
                case "40P01" -> SqlErrorKind.DEADLOCK;
                case "57014" -> SqlErrorKind.STATEMENT_CANCELLED; // statement_timeout, cancel
                case "25P02" -> SqlErrorKind.TRANSACTION_ABORTED;
                case "57P01", "57P02", "57P03" -> SqlErrorKind.CONNECTION_LOST; // terminated, crash, cannot connect
                default -> classifyState(state);
            };
        }

        @Override
        public String clock() {
            return "clock_timestamp()";
        }

        @Override
        public String plusMicros(String timestamp, String micros) {
            return "(" + timestamp + " + " + micros + " * interval '1 microsecond')";
        }

        @Override
        public @Nullable Instant readInstant(ResultSet rs, int column) throws SQLException {
            OffsetDateTime value = rs.getObject(column, OffsetDateTime.class);
            return value == null ? null : value.toInstant();
        }
    },

    /** MariaDB 10.11 or newer. */
    MARIADB("mariadb") {
        @Override
        SqlErrorKind classifyCode(String state, int code) {
            return switch (code) {
                case 1205 -> SqlErrorKind.LOCK_TIMEOUT; // lock wait timeout, NOWAIT, WAIT n
                case 1213 -> SqlErrorKind.DEADLOCK;
                case 1062 -> SqlErrorKind.UNIQUE_VIOLATION;
                case 1317, 1969 -> SqlErrorKind.STATEMENT_CANCELLED; // interrupted; max_statement_time
                case 1927, 2006, 2013 -> SqlErrorKind.CONNECTION_LOST; // killed, gone away, lost during query
                default -> classifyState(state);
            };
        }

        @Override
        public String clock() {
            // Fixed per statement, never per transaction; UTC so that DST never moves an expiry.
            return "UTC_TIMESTAMP(6)";
        }

        @Override
        public String plusMicros(String timestamp, String micros) {
            return "(" + timestamp + " + INTERVAL " + micros + " MICROSECOND)";
        }

        @Override
        public @Nullable Instant readInstant(ResultSet rs, int column) throws SQLException {
            LocalDateTime value = rs.getObject(column, LocalDateTime.class);
            return value == null ? null : value.toInstant(ZoneOffset.UTC);
        }
    };

    private final String id;

    Dialect(String id) {
        this.id = id;
    }

    /**
     * {@return the dialect's short lower-case name: {@code h2}, {@code postgresql} or {@code mariadb}} It names
     * the dialect's folder of schema scripts.
     */
    public String id() {
        return id;
    }

    /**
     * An SQL expression for the database's current time that moves inside a transaction (at
     * least per statement), for expiry decisions. On H2 it needs the clock function that
     * {@link dev.holdfast.jdbc.SchemaInstaller} creates.
     *
     * @return the expression, e.g. {@code clock_timestamp()} on PostgreSQL
     */
    public abstract String clock();

    /**
     * An SQL expression for a timestamp plus a number of microseconds: this database's interval
     * arithmetic, in one place.
     *
     * @param timestamp an SQL expression (a column, {@link #clock()}), never user input
     * @param micros    an SQL expression, usually a {@code ?} placeholder, never user input
     * @return the expression, with {@code timestamp} and {@code micros} placed in it as given
     */
    public abstract String plusMicros(String timestamp, String micros);

    /**
     * An SQL expression for {@link #clock()} plus a number of microseconds.
     *
     * @param micros an SQL expression for the number of microseconds, usually a {@code ?} placeholder, never
     *               user input
     * @return the expression, as {@link #plusMicros(String, String)} builds it
     */
    public String clockPlusMicros(String micros) {
        return plusMicros(clock(), micros);
    }

    /**
     * Reads a timestamp column written by Holdfast as an {@link Instant}.
     *
     * @param rs     a result set positioned on a row; not null
     * @param column the column's index, 1 for the first
     * @return the instant, or null if the column is SQL {@code NULL}
     * @throws SQLException if the driver cannot read the column (a closed result set, no such column, a value
     *                      that is not a timestamp)
     */
    public abstract @Nullable Instant readInstant(ResultSet rs, int column) throws SQLException;

    abstract SqlErrorKind classifyCode(String sqlState, int vendorCode);

    /**
     * Classifies an exception by SQLState and vendor code, looking through causes and chained
     * SQL exceptions, so that wrapped driver errors are recognised too.
     *
     * @param failure the exception to classify, an {@link SQLException} or one that wraps it
     * @return the first kind other than {@link SqlErrorKind#OTHER} that one of the SQL exceptions found
     *         shows; {@link SqlErrorKind#OTHER} if none does, or if there is no SQL exception at all
     */
    public SqlErrorKind classify(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql) {
                for (SQLException e = sql; e != null; e = e.getNextException()) {
                    SqlErrorKind kind = classifyCode(e.getSQLState(), e.getErrorCode());
                    if (kind != SqlErrorKind.OTHER) {
                        return kind;
                    }
                }
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return SqlErrorKind.OTHER;
    }

    static SqlErrorKind classifyState(String state) {
        if (state == null) {
            return SqlErrorKind.OTHER;
        }
        if (state.startsWith("08")) {
            return SqlErrorKind.CONNECTION_LOST;
        }
        if (state.equals("23505")) {
            return SqlErrorKind.UNIQUE_VIOLATION;
        }
        if (state.equals("40001")) {
            return SqlErrorKind.SERIALIZATION_FAILURE;
        }
        return SqlErrorKind.OTHER;
    }

    /**
     * Reads the database's current time with {@link #clock()}, in the connection's current transaction if
     * it has one.
     *
     * @param connection an open connection to a database of this dialect; not null
     * @return the database's current time
     * @throws DatabaseException if the statement fails (on H2 also when the clock function is not installed)
     */
    public Instant now(Connection connection) {
        try (PreparedStatement ps = connection.prepareStatement("SELECT " + clock());
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            // The clock function never returns SQL NULL.
            return Invariants.nonNull(readInstant(rs, 1), "the database clock returned NULL");
        } catch (SQLException e) {
            throw Failures.database("reading the " + id + " clock", e);
        }
    }

    /**
     * The dialect of the database behind a connection, from {@link DatabaseMetaData}.
     *
     * @param connection an open connection; not null; left open
     * @return the dialect of its database
     * @throws IllegalArgumentException for a database Holdfast does not support
     * @throws DatabaseException        if the database metadata cannot be read
     */
    public static Dialect detect(Connection connection) {
        try {
            return fromProductName(connection.getMetaData().getDatabaseProductName());
        } catch (SQLException e) {
            throw Failures.database("reading database metadata", e);
        }
    }

    /**
     * Borrows one connection to {@linkplain #detect(Connection) detect} the dialect, and closes it.
     *
     * @param dataSource the database; not null
     * @return the dialect of its database
     * @throws IllegalArgumentException if {@code dataSource} is null, or for a database Holdfast does not support
     * @throws DatabaseException        if no connection could be had or its metadata cannot be read
     */
    public static Dialect detect(DataSource dataSource) {
        Arguments.notNull(dataSource, "dataSource");
        try (Connection connection = dataSource.getConnection()) {
            return detect(connection);
        } catch (SQLException e) {
            throw Failures.database("connecting to detect the dialect", e);
        }
    }

    /**
     * Maps a JDBC product name ({@code H2}, {@code PostgreSQL}, {@code MariaDB}) or a dialect
     * {@linkplain #id() id} to its dialect.
     *
     * @param productName the name, in any case; not null. Only the whole name {@code h2} means H2; a name
     *                    containing {@code postgres} or {@code mariadb} means PostgreSQL or MariaDB
     * @return the dialect
     * @throws IllegalArgumentException if {@code productName} is null or names no supported database
     */
    public static Dialect fromProductName(String productName) {
        String name = Arguments.notNull(productName, "productName").toLowerCase(Locale.ROOT);
        if (name.equals("h2")) {
            return H2;
        }
        if (name.contains("postgres")) {
            return POSTGRESQL;
        }
        if (name.contains("mariadb")) {
            return MARIADB;
        }
        throw new IllegalArgumentException("Unsupported database '" + productName
                + "': Holdfast supports H2, PostgreSQL and MariaDB (MySQL is not tested yet)");
    }
}
