package dev.holdfast;

import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Another reader of INNODB_TRX that never pauses (as several test JVMs polling at once are) does
 * not keep a lock wait out of sight when both read through {@link LockViews}. Read directly, back to
 * back, the same reader kept the cache frozen: a wait that began after its first read never showed.
 */
class LockViewsTest {

    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aLockWaitShowsWhileAnotherReaderReadsBackToBack(TestDatabase db) throws Exception {
        String table = db.newTableName("innodb_views");
        db.execute("CREATE TABLE " + table + " (id INT PRIMARY KEY) ENGINE=InnoDB");
        db.execute("INSERT INTO " + table + " VALUES (1)");
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger reads = new AtomicInteger();
        CompletableFuture<Void> otherReader = new CompletableFuture<>();
        Thread reader = new Thread(
                () -> {
                    try {
                        while (!stop.get()) {
                            LockViews.read(
                                    db, () -> db.queryLong("SELECT COUNT(*) FROM information_schema.INNODB_TRX"));
                            reads.incrementAndGet();
                        }
                        otherReader.complete(null);
                    } catch (Throwable e) {
                        otherReader.completeExceptionally(e);
                    }
                },
                "test-other-innodb-trx-reader");
        reader.start();
        try (Connection holder = db.connection();
                Connection waiter = db.connection()) {
            await("the other reader reading").atMost(LockWaits.AT_MOST).until(() -> reads.get() >= 2);
            holder.setAutoCommit(false);
            try (Statement st = holder.createStatement()) {
                st.executeQuery("SELECT id FROM " + table + " WHERE id = 1 FOR UPDATE")
                        .close();
            }
            CompletableFuture<Void> waiting = new CompletableFuture<>();
            new Thread(
                            () -> { // its own thread: the common pool has one on two cores, which another task may hold
                                try (Statement st = waiter.createStatement()) {
                                    st.execute("SET STATEMENT innodb_lock_wait_timeout = 50 FOR SELECT id FROM " + table
                                            + " WHERE id = 1 FOR UPDATE");
                                    waiting.complete(null);
                                } catch (Throwable e) {
                                    waiting.completeExceptionally(e);
                                }
                            },
                            "test-waiter")
                    .start();
            try {
                LockWaits.awaitWaitingForALock(db, "%FROM " + table + " WHERE id = 1 FOR UPDATE", 1);
                assertThat(reads.get())
                        .as("reads by the other reader meanwhile")
                        .isGreaterThan(2);
            } finally {
                holder.rollback();
                holder.setAutoCommit(true);
                waiting.get(LockWaits.AT_MOST.toSeconds(), TimeUnit.SECONDS);
            }
        } finally {
            stop.set(true);
            otherReader.get(LockWaits.AT_MOST.toSeconds(), TimeUnit.SECONDS);
        }
    }
}
