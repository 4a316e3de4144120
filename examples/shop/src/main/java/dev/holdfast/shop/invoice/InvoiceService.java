package dev.holdfast.shop.invoice;

import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.optimistic.VersionConflictException;
import dev.holdfast.optimistic.VersionedTable;
import dev.holdfast.optimistic.offline.BusinessTransaction;
import dev.holdfast.optimistic.offline.OptimisticOfflineLock;
import dev.holdfast.optimistic.offline.TamperedStateException;
import dev.holdfast.pessimistic.RowRef;
import dev.holdfast.shop.order.Order;
import dev.holdfast.shop.order.OrderNotFoundException;
import dev.holdfast.shop.order.OrderRepository;
import dev.holdfast.shop.order.OrderVersionCheck;
import dev.holdfast.shop.schema.ShopTableNames;
import dev.holdfast.spring.boot.TransactionalRowLocks;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

import java.security.SecureRandom;
import java.time.Clock;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * Scenario 4, the invoice run: an optimistic offline lock with a read-set check. Page 1
 * ({@link #prepare}) reads the order's shipping address and records the order's version in a
 * {@link BusinessTransaction}, sealed (HMAC) into a hidden field and bound to the admin. Page 2
 * ({@link #issue}) opens the sealed state and, in one database transaction, verifies that the order
 * is still at that version (a shared row lock keeps it so until commit) and writes the invoice. A
 * customer who changed the address in between makes the issue fail with nothing written.
 *
 * <p>Why not {@link OptimisticOfflineLock#commit}: it only updates or deletes rows that were read, and
 * commits on a connection of its own; the invoice is a new row that must commit atomically with the
 * check, so the check runs on the JPA transaction's connection with
 * {@link VersionedTable#verifyUnchanged} for every recorded row.
 */
@Service
public class InvoiceService {

    private final OrderRepository orders;
    private final InvoiceRepository invoices;
    private final TransactionalRowLocks rowLocks;
    private final VersionedTable orderTable;
    private final OptimisticOfflineLock offline;
    private final Clock clock;

    /**
     * @param key the HMAC key for sealed states (base64, at least 32 bytes); every instance of a cluster
     *            needs the same one. Empty: a random key per start (states do not survive a restart).
     */
    public InvoiceService(
            OrderRepository orders,
            InvoiceRepository invoices,
            TransactionalRowLocks rowLocks,
            Dialect dialect,
            ShopTableNames tables,
            Clock clock,
            @Value("${shop.invoice.state-key:}") String key) {
        this.orders = orders;
        this.invoices = invoices;
        this.rowLocks = rowLocks;
        this.clock = clock;
        this.orderTable = VersionedTable.builder(tables.orders())
                .entity(OrderVersionCheck.ENTITY)
                .idColumn(Order.KEY_COLUMN)
                .dialect(dialect)
                .build();
        this.offline = OptimisticOfflineLock.builder(key(key)).table(orderTable).build();
    }

    private static byte[] key(String configured) {
        if (configured != null && !configured.isBlank()) {
            return Base64.getDecoder().decode(configured.strip());
        }
        byte[] random = new byte[32];
        new SecureRandom().nextBytes(random);
        return random;
    }

    /** What page 1 shows: the order as read, and the sealed state for the hidden field. */
    public record Draft(Order order, String state) {}

    /**
     * Page 1: reads the order and records its version in a business transaction sealed for {@code admin}.
     *
     * @throws OrderNotFoundException no such order
     */
    @Transactional(readOnly = true)
    public Draft prepare(String admin, String orderNumber) {
        Order order = orders.findById(orderNumber).orElseThrow(() -> new OrderNotFoundException(orderNumber));
        // tag::invoice-prepare[]
        BusinessTransaction tx = offline.begin().recordRead(orderTable, orderNumber, order.getVersion());
        return new Draft(order, offline.seal(tx, binding(admin, orderNumber)));
        // end::invoice-prepare[]
    }

    /**
     * Page 2: issues the invoice to the address read on page 1, if the order is unchanged since.
     *
     * @throws TamperedStateException              the state was altered, forged, missing, or sealed for
     *                                             another admin or another order; nothing written
     * @throws OrderVersionCheck.StaleOrderException the order changed since page 1; nothing written
     */
    @Transactional
    public Invoice issue(String admin, String orderNumber, String state) {
        // tag::invoice-issue[]
        BusinessTransaction tx = offline.open(state, binding(admin, orderNumber));
        Map<RowRef, Long> read = tx.versions();
        RowRef row = orderTable.row(orderNumber);
        Long version = read.get(row);
        if (version == null || read.size() != 1) {
            throw new IllegalStateException("a state sealed for order " + orderNumber + " must record exactly that order");
        }
        try {
            // shared lock until commit, on the JPA transaction's connection
            rowLocks.onTransactionConnection(connection ->
                    orderTable.verifyUnchanged(connection, orderNumber, version));
        } catch (VersionConflictException e) {
            Order current = orders.findById(orderNumber).orElseThrow(() -> new OrderNotFoundException(orderNumber));
            throw OrderVersionCheck.staleRead(e, current, dev.holdfast.shop.order.ChangeText.of("attempt.invoice"));
        }
        Order order = orders.findById(orderNumber).orElseThrow(() -> new OrderNotFoundException(orderNumber));
        return invoices.save(new Invoice(orderNumber, order.getShippingInfo(), order.getTotalCents(),
                version, admin, clock.instant()));
        // end::invoice-issue[]
    }

    /** A state opens only for the admin and the order it was sealed for: anything else is "tampered". */
    private static String binding(String admin, String orderNumber) {
        return admin + "\n" + orderNumber;
    }

    @Transactional(readOnly = true)
    public List<Invoice> invoicesOf(String orderNumber) {
        return invoices.findByOrderNumberOrderById(orderNumber);
    }
}
