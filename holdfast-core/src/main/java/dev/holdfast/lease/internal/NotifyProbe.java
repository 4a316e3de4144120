package dev.holdfast.lease.internal;

import java.lang.reflect.Method;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * Whether a notification reaches a listener connection while it idles, as the wake-ups need.
 * Behind PgBouncer in transaction pooling mode it never does: {@code LISTEN} stays on the server
 * connection its transaction ran on, which goes back to the pooler's pool, and an idle client has
 * no server connection to hear from. No statement tells a client that it talks to a pooler, so the
 * listener {@code LISTEN}s on a channel of its own, another connection of the same data source
 * notifies it, and the listener waits a bounded time for the notification.
 *
 * <p>Direct or session-pooled connections hear it within a round trip. When the notifying
 * connection cannot be had within the bound (a pool that is used up), the probe proves nothing and
 * says the notification arrived, so that the listener works as it did without a probe. Behind a
 * transaction pooler the probe's {@code LISTEN} stays on one server connection of the pooler, on a
 * channel nobody else uses, until that connection closes.
 */
final class NotifyProbe {

    private static final SecureRandom CHANNELS = new SecureRandom();
    private static final int NOT_SENT = 0;
    private static final int SENT = 1;
    private static final int FAILED = 2;

    private NotifyProbe() {}

    /**
     * @param listener        a statement of the listener connection (auto-commit)
     * @param pg              the listener connection unwrapped to pgjdbc's {@code PGConnection}
     * @param getNotifications {@code PGConnection.getNotifications(int)}
     * @param getParameter    {@code PGNotification.getParameter()}
     */
    static boolean deliveredWhileIdle(
            DataSource dataSource,
            Statement listener,
            Object pg,
            Method getNotifications,
            Method getParameter,
            long boundMillis)
            throws Exception {
        byte[] random = new byte[8];
        CHANNELS.nextBytes(random);
        String channel = "holdfast_probe_" + HexFormat.of().formatHex(random);
        String payload = "probe";
        listener.execute("LISTEN " + channel);
        try {
            AtomicInteger state = new AtomicInteger(NOT_SENT);
            AtomicLong sentAt = new AtomicLong(); // System.nanoTime() once SENT
            // The notifier borrows from the same data source; a used-up pool must not hold the listener.
            Thread notifier = new Thread(
                    () -> {
                        boolean ok = notify(dataSource, channel, payload);
                        sentAt.set(System.nanoTime());
                        state.set(ok ? SENT : FAILED);
                    },
                    "holdfast-lease-probe");
            notifier.setDaemon(true);
            long started = System.nanoTime();
            notifier.start();
            long bound = TimeUnit.MILLISECONDS.toNanos(boundMillis);
            while (true) {
                boolean sent = state.get() == SENT;
                // The bound runs from the send: a notifier slow to get its connection is no sign of a pooler.
                long left = (sent ? sentAt.get() : started) + bound - System.nanoTime();
                if (left <= 0) {
                    // Not heard: only a notification that was sent says that something between dropped it.
                    return !sent;
                }
                Object[] notifications = (Object[]) getNotifications.invoke(pg, (int)
                        Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(left), 100)));
                if (notifications != null) {
                    for (Object n : notifications) {
                        if (payload.equals(getParameter.invoke(n))) {
                            return true;
                        }
                    }
                }
            }
        } finally {
            listener.execute("UNLISTEN " + channel);
        }
    }

    /** Notifies {@code channel}; false if that failed. */
    private static boolean notify(DataSource dataSource, String channel, String payload) {
        try (Connection c = dataSource.getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            try (PreparedStatement ps = c.prepareStatement("SELECT pg_notify(?, ?)")) {
                ps.setString(1, channel);
                ps.setString(2, payload);
                ps.execute();
                if (!autoCommit) {
                    c.commit(); // a notification is sent at the commit
                }
            }
            return true;
        } catch (SQLException | RuntimeException e) {
            return false;
        }
    }
}
