package dev.holdfast.spring.boot.schema;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.testing.TestDatabase;

import java.security.SecureRandom;
import java.sql.SQLException;
import java.util.Locale;
import javax.sql.DataSource;

/**
 * A schema of one test's own (on MariaDB a database), reached by a pool whose connections have it as
 * their current schema: a recipe runs in it as written, with Holdfast's default table names, beside
 * every other test of the shared server. Dropped with all it holds at the end.
 */
final class PrivateSchema implements AutoCloseable {

    private static final SecureRandom RANDOM = new SecureRandom();

    private final TestDatabase db;
    private final String name;
    private final HikariDataSource pool;

    private PrivateSchema(TestDatabase db, String name, HikariDataSource pool) {
        this.db = db;
        this.name = name;
        this.pool = pool;
    }

    /** Creates {@code prefix_<random>} on {@code db}'s server (H2 folds it to upper case, as unquoted names are). */
    static PrivateSchema create(TestDatabase db, String prefix) throws SQLException {
        TestDatabase.Kind kind = db.kind();
        String name = prefix + "_" + Long.toString(RANDOM.nextLong() >>> 24, 36);
        name = kind == TestDatabase.Kind.H2 ? name.toUpperCase(Locale.ROOT) : name;
        db.execute(kind == TestDatabase.Kind.MARIADB ? "CREATE DATABASE " + name : "CREATE SCHEMA " + name);
        HikariConfig config = new HikariConfig();
        config.setPoolName("holdfast-test-" + name);
        config.setJdbcUrl(kind.url());
        config.setUsername(kind.user());
        config.setPassword(kind.password());
        config.setMaximumPoolSize(4);
        config.setMinimumIdle(0);
        if (kind == TestDatabase.Kind.MARIADB) {
            config.setCatalog(name);
        } else {
            config.setSchema(name);
        }
        return new PrivateSchema(db, name, new HikariDataSource(config));
    }

    /** The schema's name as the catalog stores it. */
    String name() {
        return name;
    }

    /** The pool whose connections have this schema as their current one. */
    DataSource dataSource() {
        return pool;
    }

    TestDatabase.Kind kind() {
        return db.kind();
    }

    @Override
    public void close() throws SQLException {
        pool.close();
        db.execute(
                db.kind() == TestDatabase.Kind.MARIADB
                        ? "DROP DATABASE IF EXISTS " + name
                        : "DROP SCHEMA IF EXISTS " + name + " CASCADE");
    }
}
