package dev.holdfast.pessimistic.offline;

import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link JdbcLockManager#heldLocksAfter} pages through live locks by type and id, on every database. */
class HeldLocksPageTest {

    @DatabaseTest
    void livelocksComeAPageAtATime(TestDatabase db) throws Exception {
        OfflineLockFixture f = OfflineLockFixture.create(db);
        JdbcLockManager locks = f.manager();
        for (String id : List.of("3", "1", "2")) {
            locks.tryLock("order", id, "kim");
        }
        locks.tryLock("invoice", "9", "lee");
        locks.releaseLock(locks.tryLock("order", "0", "kim"), "kim"); // released: not live

        List<String> seen = new ArrayList<>();
        HeldLock last = null;
        List<HeldLock> page;
        do {
            page = locks.heldLocksAfter(
                    null, null, last == null ? null : last.type(), last == null ? null : last.id(), 3);
            page.forEach(l -> seen.add(l.type() + "/" + l.id() + "/" + l.owner()));
            last = page.isEmpty() ? null : page.get(page.size() - 1);
        } while (page.size() == 3);
        assertThat(seen).containsExactly("invoice/9/lee", "order/1/kim", "order/2/kim", "order/3/kim");
        assertThat(locks.heldLocksAfter("order", "kim", "order", "1", 10))
                .extracting(HeldLock::id)
                .containsExactly("2", "3");
        assertThat(locks.heldLocksAfter(null, "lee", null, null, 10))
                .extracting(HeldLock::id)
                .containsExactly("9");

        List<String> before = f.snapshot();
        assertThatThrownBy(() -> locks.heldLocksAfter(null, null, "order", null, 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> locks.heldLocksAfter(null, null, null, null, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> locks.heldLocksAfter(null, null, null, null, 10_001))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> locks.heldLocksAfter("", null, null, null, 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(f.snapshot()).isEqualTo(before);
    }
}
