package dev.holdfast.shop.schema;

import dev.holdfast.jdbc.SqlIdentifier;
import org.hibernate.boot.model.naming.Identifier;
import org.hibernate.boot.model.naming.PhysicalNamingStrategySnakeCaseImpl;
import org.hibernate.engine.jdbc.env.spi.JdbcEnvironment;

/**
 * Puts the shop's tables under one prefix ({@code shop.table-prefix}, default {@code shop_}), so the
 * shop can share a database such as the test servers' {@code test} with anything else, and a test can
 * run the shop under a prefix of its own. Spring Boot hands this bean to Hibernate.
 */
public class ShopTableNames extends PhysicalNamingStrategySnakeCaseImpl {

    /** The logical name of the order table (an aggregate root, so {@code order} would be a keyword). */
    public static final String ORDERS = "purchase_order";
    /** The logical name of the order-line table. */
    public static final String ORDER_LINES = "order_line";

    private final String prefix;

    /** @throws IllegalArgumentException unless {@code prefix} makes plain identifiers (letters, digits, _) */
    public ShopTableNames(String prefix) {
        if (prefix == null || prefix.isEmpty() || !prefix.matches("[A-Za-z_][A-Za-z0-9_]*")) {
            throw new IllegalArgumentException(
                    "shop.table-prefix must be a plain identifier prefix, was '" + prefix + "'");
        }
        this.prefix = prefix.toLowerCase();
    }

    @Override
    public Identifier toPhysicalTableName(Identifier logicalName, JdbcEnvironment context) {
        Identifier snake = super.toPhysicalTableName(logicalName, context);
        return Identifier.toIdentifier(prefix + snake.getText(), snake.isQuoted());
    }

    /** The prefix, lower case. */
    public String prefix() {
        return prefix;
    }

    /** The physical name of the order table, for SQL outside JPA (row locks). */
    public String orders() {
        return SqlIdentifier.of(prefix + ORDERS).value();
    }

    /** The physical name of the order-line table. */
    public String orderLines() {
        return SqlIdentifier.of(prefix + ORDER_LINES).value();
    }
}
