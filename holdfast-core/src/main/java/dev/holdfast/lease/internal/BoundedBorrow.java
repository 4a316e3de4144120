package dev.holdfast.lease.internal;

import dev.holdfast.DatabaseException;
import dev.holdfast.internal.Failures;
import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;

/**
 * Borrows a pooled connection against a deadline. {@code getConnection()} cannot be bounded per call,
 * so it runs on a background thread that is interrupted when the caller gives up; a connection that
 * arrives after that goes straight back to the pool.
 */
final class BoundedBorrow {

    private final DataSource dataSource;
    private final LeaseThreads threads;

    BoundedBorrow(DataSource dataSource, LeaseThreads threads) {
        this.dataSource = dataSource;
        this.threads = threads;
    }

    /**
     * A pooled connection, or null if none came before {@code deadline} ({@link System#nanoTime()}).
     *
     * @throws IllegalStateException if the service is closed
     * @throws DatabaseException     if the pool failed
     */
    @Nullable
    Connection borrow(long deadline) throws InterruptedException {
        CompletableFuture<Connection> result = new CompletableFuture<>();
        Future<?> task;
        try {
            task = threads.background().submit(() -> {
                try {
                    Connection c = dataSource.getConnection();
                    if (!result.complete(c)) {
                        closeQuietly(c);
                    }
                } catch (Throwable e) {
                    result.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("The lease service is closed", e);
        }
        try {
            return result.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | InterruptedException e) {
            if (result.completeExceptionally(e)) {
                task.cancel(true);
                if (e instanceof InterruptedException ie) {
                    throw ie;
                }
                return null;
            }
            // The future completed just now, before our cancellation.
            Connection c;
            try {
                c = result.getNow(null);
            } catch (CompletionException | CancellationException failed) {
                if (e instanceof InterruptedException ie) {
                    throw ie;
                }
                throw failure(failed.getCause());
            }
            if (e instanceof InterruptedException ie) {
                closeQuietly(c); // the interrupt wins: nothing is held, and the flag's meaning is kept
                throw ie;
            }
            return c;
        } catch (ExecutionException e) {
            throw failure(e.getCause());
        }
    }

    private static RuntimeException failure(@Nullable Throwable cause) {
        if (cause instanceof SQLException sql) {
            return Failures.database("borrowing a connection", sql);
        }
        if (cause instanceof RuntimeException r) {
            return r;
        }
        return new IllegalStateException(cause);
    }

    static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException e) {
            // the pool discards it
        }
    }
}
