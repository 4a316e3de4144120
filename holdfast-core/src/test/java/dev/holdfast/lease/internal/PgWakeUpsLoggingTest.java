package dev.holdfast.lease.internal;

import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** An operator learns, once per outage, that blocking lease waiters fell back to polling. */
class PgWakeUpsLoggingTest {

    @Test
    void aListenerThatCannotConnectIsLoggedOnceAsAWarning() throws Exception {
        Logger logger = Logger.getLogger(PgWakeUps.class.getName());
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                records.add(record);
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        logger.addHandler(capture);
        UnreachableDataSource unreachable = new UnreachableDataSource();
        PgWakeUps wakeUps = new PgWakeUps(unreachable, new PgLeaseSql("holdfast_test_table"), 2000, new LocalPollers());
        try {
            assertThat(wakeUps.start()).isTrue();
            await("three failed attempts to listen (50, 100, 200 ms backoff)")
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> unreachable.attempts.get() >= 3);
            assertThat(records).as("several failed attempts: still one record").hasSize(1);
            assertThat(records.get(0).getLevel()).isEqualTo(Level.WARNING);
            assertThat(records.get(0).getMessage())
                    .contains("holdfast_test_table")
                    .contains("poll");
            assertThat(records.get(0).getThrown()).isInstanceOf(SQLException.class);
            assertThat(wakeUps.listening()).isFalse();
        } finally {
            wakeUps.close();
            logger.removeHandler(capture);
        }
    }

    /** A pool whose database is down. */
    private static final class UnreachableDataSource implements DataSource {
        final java.util.concurrent.atomic.AtomicInteger attempts = new java.util.concurrent.atomic.AtomicInteger();

        @Override
        public Connection getConnection() throws SQLException {
            attempts.incrementAndGet();
            throw new SQLException("connection refused", "08001");
        }

        @Override
        public Connection getConnection(String user, String password) throws SQLException {
            return getConnection();
        }

        @Override
        public PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {}

        @Override
        public void setLoginTimeout(int seconds) {}

        @Override
        public int getLoginTimeout() {
            return 0;
        }

        @Override
        public java.util.logging.Logger getParentLogger() {
            return Logger.getGlobal();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            throw new SQLException("not a wrapper");
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) {
            return false;
        }
    }
}
