package dev.holdfast.shedlock;

import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseExpiredException;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterEach;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The contract of ShedLock's {@code AbstractLockProviderIntegrationTest} and
 * {@code AbstractExtensibleLockProviderIntegrationTest} (not published for ShedLock 7, so the same
 * cases are written here), on every database, plus what Holdfast adds: database time whatever the
 * application clock says, and an unlock that reports an expired lock.
 */
class HoldfastLockProviderTest {

    private static final Duration AT_MOST = Duration.ofSeconds(2);
    private static final String NAME = "job";

    private LeaseService leases;

    @AfterEach
    void closeLeases() {
        if (leases != null) {
            leases.close();
        }
    }

    private LockProvider provider(TestDatabase db) {
        String table = db.newTableName("shedlock_lease");
        db.dropAfterTest(table + "_queue");
        new SchemaInstaller(db.dataSource()).install(HoldfastTable.LEASES, table);
        leases = LeaseService.builder(db.dataSource()).table(table).build();
        return new HoldfastLockProvider(leases, "test-node");
    }

    private static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
        return new LockConfiguration(Instant.now(), name, atMost, atLeast);
    }

    private static LockConfiguration config(String name) {
        return config(name, AT_MOST, Duration.ZERO);
    }

    private void assertLocked(String name) {
        assertThat(leases.list()).extracting(Lease::name).contains(name);
    }

    private void assertUnlocked(String name) {
        assertThat(leases.list()).extracting(Lease::name).doesNotContain(name);
    }

    @DatabaseTest
    void shouldCreateLock(TestDatabase db) {
        LockProvider provider = provider(db);
        Optional<SimpleLock> lock = provider.lock(config(NAME));
        assertThat(lock).isPresent();
        assertLocked(NAME);
        lock.get().unlock();
        assertUnlocked(NAME);
    }

    @DatabaseTest
    void shouldNotReturnSecondLock(TestDatabase db) {
        LockProvider provider = provider(db);
        Optional<SimpleLock> lock = provider.lock(config(NAME));
        assertThat(lock).isPresent();
        assertThat(provider.lock(config(NAME)))
                .as("same node, another thread: no re-entry")
                .isEmpty();
        lock.get().unlock();
    }

    @DatabaseTest
    void shouldCreateTwoIndependentLocks(TestDatabase db) {
        LockProvider provider = provider(db);
        Optional<SimpleLock> one = provider.lock(config("one"));
        Optional<SimpleLock> two = provider.lock(config("two"));
        assertThat(one).isPresent();
        assertThat(two).isPresent();
        one.get().unlock();
        assertUnlocked("one");
        assertLocked("two");
        two.get().unlock();
    }

    @DatabaseTest
    void shouldLockTwiceInARow(TestDatabase db) {
        LockProvider provider = provider(db);
        provider.lock(config(NAME)).orElseThrow().unlock();
        provider.lock(config(NAME)).orElseThrow().unlock();
        assertUnlocked(NAME);
    }

    @DatabaseTest
    void shouldTimeout(TestDatabase db) throws Exception {
        LockProvider provider = provider(db);
        // half a second: the second call must reach the database while the first lock lives, even
        // behind a stalled flush on a shared machine
        Duration atMost = Duration.ofMillis(2000);
        assertThat(provider.lock(config(NAME, atMost, Duration.ZERO))).isPresent();
        assertThat(provider.lock(config(NAME, atMost, Duration.ZERO))).isEmpty();
        Thread.sleep(atMost.toMillis() + 100); // lockAtMostFor runs out
        assertThat(provider.lock(config(NAME, atMost, Duration.ZERO))).isPresent();
    }

    @DatabaseTest
    void shouldBeAbleToLockRightAfterUnlock(TestDatabase db) {
        LockProvider provider = provider(db);
        for (int i = 0; i < 10; i++) {
            SimpleLock lock = provider.lock(config(NAME)).orElseThrow();
            assertLocked(NAME);
            lock.unlock();
            assertUnlocked(NAME);
        }
    }

    @DatabaseTest
    void shouldLockAtLeastFor(TestDatabase db) throws Exception {
        LockProvider provider = provider(db);
        // two seconds: unlock, the check and the second lock reach the database within it, even on a loaded machine
        SimpleLock lock =
                provider.lock(config(NAME, AT_MOST, Duration.ofMillis(2000))).orElseThrow();
        lock.unlock();
        assertLocked(NAME);
        assertThat(provider.lock(config(NAME)))
                .as("still within lockAtLeastFor")
                .isEmpty();
        Thread.sleep(2050); // lockAtLeastFor runs out
        assertUnlocked(NAME);
        assertThat(provider.lock(config(NAME))).isPresent();
    }

    @DatabaseTest
    void fuzzTestShouldPass(TestDatabase db) throws Exception {
        LockProvider provider = provider(db);
        DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider);
        int[] counters = new int[2];
        AtomicInteger[] executions = {new AtomicInteger(), new AtomicInteger()};
        ExecutorService threads = Executors.newFixedThreadPool(9);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < 9; t++) {
            int iterations = t == 8 ? 10 : 100; // one short thread, as ShedLock's FuzzTester
            futures.add(threads.submit(() -> {
                for (int i = 0; i < iterations; i++) {
                    int index = i % 2;
                    executor.executeWithLock(
                            (Runnable) () -> {
                                int value = counters[index];
                                Thread.onSpinWait();
                                counters[index] = value + 1; // unsynchronised on purpose: only the lock protects it
                                executions[index].incrementAndGet();
                            },
                            config("fuzz-" + index, Duration.ofSeconds(5), Duration.ZERO));
                }
                return null;
            }));
        }
        for (Future<?> f : futures) {
            f.get(2, TimeUnit.MINUTES);
        }
        threads.shutdown();
        assertThat(executions[0].get() + executions[1].get()).isPositive();
        assertThat(counters[0]).isEqualTo(executions[0].get());
        assertThat(counters[1]).isEqualTo(executions[1].get());
    }

    // --- extensible -------------------------------------------------------------------------------

    @DatabaseTest
    void shouldBeAbleToExtendLock(TestDatabase db) throws Exception {
        LockProvider provider = provider(db);
        SimpleLock lock = provider.lock(config(NAME, Duration.ofMillis(1500), Duration.ZERO))
                .orElseThrow();
        SimpleLock extended = lock.extend(Duration.ofSeconds(5), Duration.ZERO).orElseThrow();
        Thread.sleep(1600); // past the first lockAtMostFor, within the extended one
        assertLocked(NAME);
        assertThat(((HoldfastLockProvider.HoldfastLock) extended).lease().token())
                .isEqualTo(((HoldfastLockProvider.HoldfastLock) lock).lease().token());
        extended.unlock();
        assertUnlocked(NAME);
    }

    @DatabaseTest
    void shouldBeAbleToExtendMultipleTimes(TestDatabase db) {
        LockProvider provider = provider(db);
        SimpleLock lock = provider.lock(config(NAME)).orElseThrow();
        for (int i = 0; i < 5; i++) {
            lock = lock.extend(AT_MOST, Duration.ZERO).orElseThrow();
        }
        lock.unlock();
        assertUnlocked(NAME);
    }

    @DatabaseTest
    void shouldNotBeAbleToExtendUnlockedLock(TestDatabase db) {
        LockProvider provider = provider(db);
        SimpleLock lock = provider.lock(config(NAME)).orElseThrow();
        lock.unlock();
        assertThatThrownBy(() -> lock.extend(AT_MOST, Duration.ZERO)).isInstanceOf(IllegalStateException.class);
    }

    @DatabaseTest
    void shouldNotBeAbleToExtendExpiredLock(TestDatabase db) throws Exception {
        LockProvider provider = provider(db);
        SimpleLock lock = provider.lock(config(NAME, Duration.ofMillis(50), Duration.ZERO))
                .orElseThrow();
        Thread.sleep(100); // the 50 ms lockAtMostFor runs out
        assertThat(lock.extend(AT_MOST, Duration.ZERO)).isEmpty();
        assertUnlocked(NAME);
    }

    @DatabaseTest
    void shouldBeAbleToExtendAtLeast(TestDatabase db) throws Exception {
        LockProvider provider = provider(db);
        SimpleLock lock = provider.lock(config(NAME)).orElseThrow();
        SimpleLock extended = lock.extend(AT_MOST, Duration.ofMillis(2000)).orElseThrow();
        extended.unlock();
        assertLocked(NAME);
        Thread.sleep(2050); // the extended lockAtLeastFor runs out
        assertUnlocked(NAME);
    }

    @DatabaseTest
    void lockCanNotBeExtendedTwice(TestDatabase db) {
        LockProvider provider = provider(db);
        SimpleLock lock = provider.lock(config(NAME)).orElseThrow();
        assertThat(lock.extend(AT_MOST, Duration.ZERO)).isPresent();
        assertThatThrownBy(() -> lock.extend(AT_MOST, Duration.ZERO)).isInstanceOf(IllegalStateException.class);
    }

    @DatabaseTest
    void lockCanNotBeUnlockedAfterExtending(TestDatabase db) {
        LockProvider provider = provider(db);
        SimpleLock lock = provider.lock(config(NAME)).orElseThrow();
        SimpleLock extended = lock.extend(AT_MOST, Duration.ZERO).orElseThrow();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class);
        extended.unlock();
    }

    // --- beyond ShedLock ---------------------------------------------------------------------------

    /** Nodes whose application clocks are hours apart: the configuration's createdAt is ignored, the database decides. */
    @DatabaseTest
    void applicationClocksHoursApartDoNotMatter(TestDatabase db) throws Exception {
        LockProvider provider = provider(db);
        Instant now = Instant.now();
        LockConfiguration fastNode =
                new LockConfiguration(now.plus(Duration.ofHours(3)), NAME, Duration.ofMillis(1500), Duration.ZERO);
        LockConfiguration slowNode =
                new LockConfiguration(now.minus(Duration.ofHours(3)), NAME, AT_MOST, Duration.ZERO);
        SimpleLock fast = provider.lock(fastNode).orElseThrow();
        assertThat(provider.lock(slowNode))
                .as("the slow clock does not see it expired")
                .isEmpty();
        Thread.sleep(1550); // the fast node's 1.5 s lockAtMostFor runs out, by database time
        SimpleLock slow = provider.lock(slowNode).orElseThrow();
        assertThat(((HoldfastLockProvider.HoldfastLock) slow).lease().token())
                .isGreaterThan(
                        ((HoldfastLockProvider.HoldfastLock) fast).lease().token());
        slow.unlock();
    }

    /** ShedLock's JDBC provider ignores an unlock that matched nothing; this one says the lock had expired. */
    @DatabaseTest
    void unlockingAnExpiredLockIsReported(TestDatabase db) throws Exception {
        LockProvider provider = provider(db);
        SimpleLock lock = provider.lock(config(NAME, Duration.ofMillis(50), Duration.ZERO))
                .orElseThrow();
        Thread.sleep(100); // the 50 ms lockAtMostFor runs out
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseExpiredException.class);
    }

    @DatabaseTest
    void badNamesAreRefused(TestDatabase db) {
        LockProvider provider = provider(db);
        assertThatThrownBy(() -> provider.lock(config("x".repeat(201)))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new HoldfastLockProvider(leases, " ")).isInstanceOf(IllegalArgumentException.class);
        assertThat(leases.list()).isEmpty();
    }

    @DatabaseTest
    void aProviderOfADataSourceClosesTheServiceItCreated(TestDatabase db) throws Exception {
        HoldfastLockProvider provider = HoldfastLockProvider.of(db.dataSource());
        LeaseService own = (LeaseService) provider.leases();
        provider.close();
        assertThatThrownBy(() -> own.acquire("job", "test-node", AT_MOST, Duration.ofSeconds(1)))
                .as("closed with its provider")
                .isInstanceOf(IllegalStateException.class);
    }

    @DatabaseTest
    void aProviderLeavesLeasesItWasGivenOpen(TestDatabase db) throws Exception {
        HoldfastLockProvider provider = (HoldfastLockProvider) provider(db);
        provider.close();
        Lease lease = leases.acquire(NAME, "test-node", AT_MOST, Duration.ofSeconds(1));
        assertThat(lease.name())
                .as("the caller's service still waits and grants")
                .isEqualTo(NAME);
        leases.release(lease);
    }
}
