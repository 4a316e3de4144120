package dev.holdfast.shop.order;

import dev.holdfast.pessimistic.offline.ForeignLockException;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.pessimistic.offline.LockNotHeldException;
import dev.holdfast.pessimistic.offline.Reacquired;
import dev.holdfast.spring.boot.OfflineLockHeldException;
import dev.holdfast.spring.boot.OfflineLockLostException;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Scenario 3's service on H2, PostgreSQL and MariaDB (the shop's own profiles and the auto-configured
 * lock manager): the edit lock is checked against the order and the admin before anything changes,
 * a refused edit leaves the row and the lock as they were, and no connection stays borrowed.
 */
class OrderEditDatabaseTest {

    private static final Receiver NEW_RECEIVER = new Receiver("New Receiver", "+1 555 0123");

    @DatabaseTest
    void editsOnlyWithTheAdminsLiveLockOnThatOrder(TestDatabase db) {
        ShopOnDatabase shop = ShopOnDatabase.on(db);
        String a = shop.newOrder("alice");
        String b = shop.newOrder("bob");
        LockId kimsA = shop.service.startEditing("kim", a).lockId();
        LockId adminsB = shop.service.startEditing("admin", b).lockId();
        assertThatThrownBy(() -> shop.service.startEditing("admin", a))
                .isInstanceOfSatisfying(
                        OfflineLockHeldException.class,
                        e -> assertThat(e.getCause().owner()).contains("kim"));

        assertThatThrownBy(() -> shop.service.edit("admin", a, kimsA, 0, NEW_RECEIVER, List.of(2)))
                .isInstanceOfSatisfying(
                        OfflineLockLostException.class,
                        e -> assertThat(e.getCause())
                                .isInstanceOfSatisfying(
                                        ForeignLockException.class,
                                        f -> assertThat(f.reason())
                                                .isEqualTo(ForeignLockException.Reason.OTHER_OWNER)));
        assertThatThrownBy(() -> shop.service.edit("kim", a, adminsB, 0, NEW_RECEIVER, List.of(2)))
                .isInstanceOf(OfflineLockLostException.class)
                .cause()
                .isInstanceOf(ForeignLockException.class);
        assertThatThrownBy(() -> shop.service.edit(
                        "kim", a, LockId.parse("AAAAAAAAAAAAAAAAAAAAAA"), 0, NEW_RECEIVER, List.of(2)))
                .isInstanceOf(OfflineLockLostException.class)
                .cause()
                .isExactlyInstanceOf(LockNotHeldException.class);
        assertThat(shop.version(a)).isZero();
        assertThat(shop.activeConnections()).isZero();

        shop.service.edit("kim", a, kimsA, 0, NEW_RECEIVER, List.of(2));
        shop.service.stopEditing("kim", kimsA);
        assertThat(shop.version(a)).isEqualTo(1);
        assertThat(shop.jdbc.queryForObject(
                        "SELECT receiver_name FROM " + shop.table + " WHERE order_number = ?", String.class, a))
                .isEqualTo("New Receiver");
        // released: the next admin gets the lock; the old lock id authorizes nothing any more
        LockId next = shop.service.startEditing("admin", a).lockId();
        assertThatThrownBy(() -> shop.service.edit("kim", a, kimsA, 1, NEW_RECEIVER, List.of(3)))
                .isInstanceOf(OfflineLockLostException.class)
                .cause()
                .isInstanceOf(LockNotHeldException.class);
        shop.service.stopEditing("admin", next);
        shop.service.stopEditing("admin", adminsB);
        assertThat(shop.version(a)).isEqualTo(1);
        assertThat(shop.activeConnections()).isZero();
    }

    @DatabaseTest
    void anAdminReopeningTheEditPageKeepsEditingAndTheEarlierPageCanNoLongerSave(TestDatabase db) {
        ShopOnDatabase shop = ShopOnDatabase.on(db);
        String a = shop.newOrder("alice");
        Reacquired firstTab = shop.service.startEditing("admin", a);
        assertThat(firstTab.replaced()).isFalse();

        Reacquired secondTab = shop.service.startEditing("admin", a);

        assertThat(secondTab.replaced()).isTrue();
        assertThatThrownBy(() -> shop.service.edit("admin", a, firstTab.lockId(), 0, NEW_RECEIVER, List.of(2)))
                .isInstanceOf(OfflineLockLostException.class)
                .cause()
                .isInstanceOf(LockNotHeldException.class);
        assertThat(shop.version(a)).isZero();
        assertThatThrownBy(() -> shop.service.startEditing("kim", a))
                .isInstanceOfSatisfying(
                        OfflineLockHeldException.class,
                        e -> assertThat(e.getCause().owner()).contains("admin"));
        shop.service.edit("admin", a, secondTab.lockId(), 0, NEW_RECEIVER, List.of(2));
        shop.service.stopEditing("admin", secondTab.lockId());
        assertThat(shop.version(a)).isEqualTo(1);
        assertThat(shop.activeConnections()).isZero();
    }
}
