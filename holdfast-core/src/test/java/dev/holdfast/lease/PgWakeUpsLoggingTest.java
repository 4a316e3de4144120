package dev.holdfast.lease;

import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;

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
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(capture);
        PgWakeUps wakeUps = new PgWakeUps(new UnreachableDataSource(), new PgLeaseSql("holdfast_test_table"));
        try {
            assertThat(wakeUps.start()).isTrue();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (records.isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            Thread.sleep(400); // several failed attempts (50, 100, 200 ms backoff): still one record
            assertThat(records).hasSize(1);
            assertThat(records.get(0).getLevel()).isEqualTo(Level.WARNING);
            assertThat(records.get(0).getMessage()).contains("holdfast_test_table").contains("poll");
            assertThat(records.get(0).getThrown()).isInstanceOf(SQLException.class);
            assertThat(wakeUps.isListening()).isFalse();
        } finally {
            wakeUps.close();
            logger.removeHandler(capture);
        }
    }

    /** A pool whose database is down. */
    private static final class UnreachableDataSource implements DataSource {
        @Override
        public Connection getConnection() throws SQLException {
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
        public void setLogWriter(PrintWriter out) {
        }

        @Override
        public void setLoginTimeout(int seconds) {
        }

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
