package dev.holdfast.testing;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * What one test creates on a server, undone when it ends: its own pools (closed) and tables
 * (dropped); and the one-statement helpers both database parameters offer.
 */
final class Scratch {

    private static final SecureRandom RANDOM = new SecureRandom();

    private final List<String> tables = new ArrayList<>();
    private final List<HikariDataSource> pools = new ArrayList<>();

    /** A table name no other test (in this or another JVM) uses: {@code prefix_<random>}; dropped at the end. */
    synchronized String newTableName(String prefix) {
        String name = prefix + "_" + Long.toString(RANDOM.nextLong() >>> 24, 36);
        tables.add(name);
        return name;
    }

    synchronized void dropAfterTest(String table) {
        tables.add(table);
    }

    /** A new pool, closed at the end. */
    synchronized HikariDataSource newPool(
            String url, String user, String password, String name, int maxSize, Duration connectionTimeout) {
        HikariDataSource pool = pool(url, user, password, name, maxSize, connectionTimeout);
        pools.add(pool);
        return pool;
    }

    static HikariDataSource pool(
            String url, String user, String password, String name, int maxSize, Duration connectionTimeout) {
        HikariConfig config = new HikariConfig();
        config.setPoolName(name);
        config.setJdbcUrl(url);
        config.setUsername(user);
        config.setPassword(password);
        config.setMaximumPoolSize(maxSize);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(connectionTimeout.toMillis());
        config.setInitializationFailTimeout(-1);
        return new HikariDataSource(config);
    }

    static int execute(DataSource dataSource, String sql, Object... parameters) throws SQLException {
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, parameters);
            return ps.execute() ? 0 : ps.getUpdateCount();
        }
    }

    /** The first column of the one row {@code sql} returns. */
    static <T> T queryOne(DataSource dataSource, Class<T> type, String sql, Object... parameters) throws SQLException {
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, parameters);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("no row: " + sql);
                }
                return type == Long.class ? type.cast(rs.getLong(1)) : type.cast(rs.getString(1));
            }
        }
    }

    private static void bind(PreparedStatement ps, Object[] parameters) throws SQLException {
        for (int i = 0; i < parameters.length; i++) {
            ps.setObject(i + 1, parameters[i]);
        }
    }

    /**
     * The tables named after {@code table} ({@code <table>_...}, e.g. a lease table's queue), in the
     * connection's schema: a test's table name is its own, and so are names it begins.
     */
    private static List<String> satellites(Connection c, String table) throws SQLException {
        if (table.contains(".") || table.contains("\"")) {
            return List.of();
        }
        DatabaseMetaData meta = c.getMetaData();
        String stored = meta.storesUpperCaseIdentifiers()
                ? table.toUpperCase(Locale.ROOT)
                : meta.storesLowerCaseIdentifiers() ? table.toLowerCase(Locale.ROOT) : table;
        String escape = meta.getSearchStringEscape();
        String pattern = stored.replace("_", escape + "_").replace("%", escape + "%") + escape + "_%";
        List<String> found = new ArrayList<>();
        try (ResultSet rs = meta.getTables(c.getCatalog(), c.getSchema(), pattern, new String[] {"TABLE"})) {
            while (rs.next()) {
                found.add(rs.getString("TABLE_NAME"));
            }
        }
        return found;
    }

    /** Closes the test's pools and drops its tables (through {@code admin}, asked for only if there are any). */
    synchronized void cleanUp(Supplier<DataSource> admin) throws SQLException {
        for (HikariDataSource pool : pools) {
            pool.close();
        }
        pools.clear();
        if (tables.isEmpty()) {
            return;
        }
        SQLException failure = null;
        try (Connection c = admin.get().getConnection();
                Statement s = c.createStatement()) {
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true);
            }
            for (String table : tables) {
                try {
                    for (String satellite : satellites(c, table)) {
                        s.execute("DROP TABLE IF EXISTS " + satellite);
                    }
                    s.execute("DROP TABLE IF EXISTS " + table);
                } catch (SQLException e) {
                    failure = e;
                }
            }
        } finally {
            tables.clear();
        }
        if (failure != null) {
            throw failure;
        }
    }
}
