package dev.holdfast.jdbc.dialect;

import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientException;
import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DialectTest {

    @DatabaseTest
    void detectsTheDialectFromMetadata(TestDatabase db) {
        assertThat(Dialect.detect(db.dataSource()).id()).isEqualTo(db.kind().id());
    }

    @DatabaseTest
    void clockMovesInsideATransactionAndAgreesWithThisMachine(TestDatabase db) throws Exception {
        Dialect dialect = Dialect.detect(db.dataSource());
        new SchemaInstaller(db.dataSource(), dialect).installClock();
        try (Connection c = db.connection()) {
            c.setAutoCommit(false);
            try {
                Instant first = dialect.now(c);
                Thread.sleep(50); // the clock must move between the two readings
                Instant second = dialect.now(c);
                // now() / CURRENT_TIMESTAMP would return the same value twice here.
                assertThat(Duration.between(first, second)).isGreaterThanOrEqualTo(Duration.ofMillis(40));
                // Same machine: the database clock is this clock, give or take the round trip.
                assertThat(Duration.between(second, Instant.now()).abs()).isLessThan(Duration.ofSeconds(5));
            } finally {
                c.rollback();
            }
        }
    }

    @Test
    void theH2ClockIsThisMachinesTimeInUtc() {
        Instant before = Instant.now();
        java.time.OffsetDateTime clock = H2Clock.clockTimestamp();
        Instant after = Instant.now();
        assertThat(clock.getOffset()).isEqualTo(java.time.ZoneOffset.UTC);
        assertThat(clock.toInstant()).isBetween(before, after);
    }

    @Test
    void classifiesVendorCodes() {
        assertThat(Dialect.POSTGRESQL.classify(new SQLException("x", "55P03"))).isEqualTo(SqlErrorKind.LOCK_TIMEOUT);
        assertThat(Dialect.POSTGRESQL.classify(new SQLException("x", "40P01"))).isEqualTo(SqlErrorKind.DEADLOCK);
        assertThat(Dialect.POSTGRESQL.classify(new SQLException("x", "25P02")))
                .isEqualTo(SqlErrorKind.TRANSACTION_ABORTED);
        assertThat(Dialect.POSTGRESQL.classify(new SQLException("x", "23505")))
                .isEqualTo(SqlErrorKind.UNIQUE_VIOLATION);
        assertThat(Dialect.POSTGRESQL.classify(new SQLException("x", "40001")))
                .isEqualTo(SqlErrorKind.SERIALIZATION_FAILURE);
        assertThat(Dialect.POSTGRESQL.classify(new SQLException("x", "57P01"))).isEqualTo(SqlErrorKind.CONNECTION_LOST);
        assertThat(Dialect.POSTGRESQL.classify(new SQLException("x", "08006"))).isEqualTo(SqlErrorKind.CONNECTION_LOST);
        assertThat(Dialect.MARIADB.classify(new SQLException("x", "HY000", 1205)))
                .isEqualTo(SqlErrorKind.LOCK_TIMEOUT);
        assertThat(Dialect.MARIADB.classify(new SQLException("x", "40001", 1213)))
                .isEqualTo(SqlErrorKind.DEADLOCK);
        assertThat(Dialect.MARIADB.classify(new SQLException("x", "70100", 1969)))
                .isEqualTo(SqlErrorKind.STATEMENT_CANCELLED);
        assertThat(Dialect.MARIADB.classify(new SQLException("x", "23000", 1062)))
                .isEqualTo(SqlErrorKind.UNIQUE_VIOLATION);
        assertThat(Dialect.H2.classify(new SQLException("x", "HYT00", 50200))).isEqualTo(SqlErrorKind.LOCK_TIMEOUT);
        assertThat(Dialect.H2.classify(new SQLException("x", "40001", 40001))).isEqualTo(SqlErrorKind.DEADLOCK);
        assertThat(Dialect.H2.classify(new SQLException("x", "23505", 23505))).isEqualTo(SqlErrorKind.UNIQUE_VIOLATION);
        assertThat(Dialect.H2.classify(new SQLException("x", "42S02", 42102))).isEqualTo(SqlErrorKind.OTHER);
    }

    @Test
    void classifiesThroughWrappersAndChains() {
        SQLException chained = new SQLException("batch failed", "XX000");
        chained.setNextException(new SQLException("deadlock", "40P01"));
        assertThat(Dialect.POSTGRESQL.classify(new RuntimeException("wrapped", chained)))
                .isEqualTo(SqlErrorKind.DEADLOCK);
        assertThat(Dialect.MARIADB.classify(new SQLTransientException("x", "HY000", 1205)))
                .isEqualTo(SqlErrorKind.LOCK_TIMEOUT);
        assertThat(Dialect.H2.classify(new IllegalStateException("no sql here")))
                .isEqualTo(SqlErrorKind.OTHER);
    }

    @Test
    void mapsProductNamesAndRejectsOthers() {
        assertThat(Dialect.fromProductName("PostgreSQL")).isEqualTo(Dialect.POSTGRESQL);
        assertThat(Dialect.fromProductName("MariaDB")).isEqualTo(Dialect.MARIADB);
        assertThat(Dialect.fromProductName("H2")).isEqualTo(Dialect.H2);
        assertThatThrownBy(() -> Dialect.fromProductName("Oracle"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Unsupported database 'Oracle'");
    }
}
