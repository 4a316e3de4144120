package dev.holdfast.pessimistic;

import dev.holdfast.LockViews;
import dev.holdfast.LockWaits;
import dev.holdfast.pessimistic.BlockingSessions.Session;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * {@link RowLockWaits} lists the sessions that wait for a lock now, each with its blockers, chains
 * included, on every database. Other builds share the servers, so each test looks for its own
 * sessions in the list.
 */
class RowLockWaitsTest {

    /**
     * The list's entry for {@code s}, read through {@link LockViews}: MariaDB's INNODB_TRX cache is refreshed
     * only when nobody read it for 0.1 s (seen here: a wait listed for 10 s after it ended, read every 50 ms;
     * docs/database-facts.md, gotcha 8).
     */
    private static Optional<RowLockWait> waitOf(TestDatabase db, RowLockWaits waits, Session s) throws Exception {
        return LockViews.read(
                db,
                () -> waits.list(RowLockWaits.MAX_LIMIT).stream()
                        .filter(w -> w.sessionId().equals(s.id()))
                        .findFirst());
    }

    private static final Duration POLL = Duration.ofMillis(50);

    /** Waits until the list shows {@code s} waiting with known blockers (MariaDB's views lag by 0.1 s or more). */
    private static RowLockWait awaitListed(TestDatabase db, RowLockWaits waits, Session s) {
        return await("session " + s.name() + " listed")
                .atMost(LockWaits.AT_MOST)
                .pollInterval(POLL)
                .until(
                        () -> waitOf(db, waits, s)
                                .filter(w -> w.blockers().known())
                                .orElse(null),
                        w -> w != null);
    }

    @DatabaseTest
    void aWaitIsListedWithItsBlockerAndGoneOnceItEnds(TestDatabase db) throws Exception {
        RowLockWaits waits =
                RowLockWaits.of(dev.holdfast.jdbc.dialect.Dialect.detect(db.dataSource()), db.dataSource());
        Session a;
        Session b;
        try (BlockingSessions s = new BlockingSessions(db, 1)) {
            a = s.begin("a");
            s.lock(a, 1);
            b = s.begin("b");
            s.waitFor(b, 1);

            RowLockWait w = awaitListed(db, waits, b);
            assertThat(w.blockers().waitingSession()).isEqualTo(b.id());
            assertThat(w.blockers().sessions()).extracting(Blocker::sessionId).containsExactly(a.id());
            assertThat(w.user()).isEqualToIgnoringCase(db.kind().user());
            assertThat(w.statement())
                    .containsIgnoringCase("FROM " + s.table)
                    .doesNotContain(BlockingSessions.SECRET_LITERAL)
                    .doesNotContain(BlockingSessions.SECRET_BIND);
            if (db.kind() == TestDatabase.Kind.POSTGRESQL) {
                assertThat(w.applicationName()).isEqualTo("holdfast-test-b");
            }
            assertThat(w.waitingSince()).isBeforeOrEqualTo(Instant.now().plusSeconds(1));
            // the blocker itself waits for nothing: not listed
            assertThat(waitOf(db, waits, a)).isEmpty();
            System.out.printf("[%s] %s%n", db.id(), w);
        }
        await("the wait ended")
                .atMost(LockWaits.AT_MOST)
                .pollInterval(POLL)
                .until(() -> waitOf(db, waits, b).isEmpty());
    }

    @DatabaseTest
    void aChainIsListedNearestFirst(TestDatabase db) throws Exception {
        RowLockWaits waits =
                RowLockWaits.of(dev.holdfast.jdbc.dialect.Dialect.detect(db.dataSource()), db.dataSource());
        try (BlockingSessions s = new BlockingSessions(db, 2)) {
            Session a = s.begin("a");
            s.lock(a, 1);
            Session b = s.begin("b");
            s.lock(b, 2);
            s.waitFor(b, 1); // a blocks b
            Session c = s.begin("c");
            s.waitFor(c, 2); // b blocks c

            RowLockWait w = await("c listed with the chain")
                    .atMost(LockWaits.AT_MOST)
                    .pollInterval(POLL)
                    .until(
                            () -> waitOf(db, waits, c).orElse(null),
                            x -> x != null && x.blockers().sessions().size() == 2);
            assertThat(w.blockers().sessions()).extracting(Blocker::sessionId).containsExactly(b.id(), a.id());
            assertThat(w.blockers().sessions()).extracting(Blocker::blocks).containsExactly(c.id(), b.id());
            assertThat(awaitListed(db, waits, b).blockers().sessions())
                    .extracting(Blocker::sessionId)
                    .containsExactly(a.id());
        }
    }

    @DatabaseTest
    void theLimitHoldsAndBadLimitsAreRefused(TestDatabase db) throws Exception {
        RowLockWaits waits =
                RowLockWaits.of(dev.holdfast.jdbc.dialect.Dialect.detect(db.dataSource()), db.dataSource());
        try (BlockingSessions s = new BlockingSessions(db, 1)) {
            Session a = s.begin("a");
            s.lock(a, 1);
            Session b = s.begin("b");
            s.waitFor(b, 1);
            Session c = s.begin("c");
            s.waitFor(c, 1);
            awaitListed(db, waits, b);
            awaitListed(db, waits, c);
            List<RowLockWait> one = waits.list(1);
            assertThat(one).hasSizeLessThanOrEqualTo(1);
        }
        for (int bad : new int[] {0, -1, RowLockWaits.MAX_LIMIT + 1}) {
            assertThatThrownBy(() -> waits.list(bad)).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
