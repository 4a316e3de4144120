package dev.holdfast.pessimistic;

import dev.holdfast.jdbc.dialect.Dialect;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** The order of {@link PessimisticLocks#forUpdateAll}, without a database. */
class LockOrderTest {

    private static final LockOrder.SchemaResolver PUBLIC = table -> "public";
    private static final LockOrder.SchemaResolver NEVER = table -> {
        throw new AssertionError("no schema needed to order these rows, but asked for " + table);
    };

    private static List<RowRef> sort(Dialect dialect, LockOrder.SchemaResolver resolver, RowRef... rows)
            throws SQLException {
        return LockOrder.sort(dialect, List.of(rows), resolver);
    }

    @ParameterizedTest
    @EnumSource(Dialect.class)
    void spellingsOfOneTableOrColumnTakeTheSamePlace(Dialect dialect) throws SQLException {
        // Raw strings order these differently ('O' < 'c' < 'o'); the database sees one table "orders".
        List<RowRef> upper = sort(dialect, NEVER, RowRef.of("ORDERS", 1L), RowRef.of("customer", 1L));
        List<RowRef> mixed = sort(dialect, NEVER, RowRef.of("Orders", 1L), RowRef.of("customer", 1L));
        List<RowRef> lower = sort(dialect, NEVER, RowRef.of("orders", 1L), RowRef.of("customer", 1L));
        assertThat(upper).containsExactly(RowRef.of("customer", 1L), RowRef.of("ORDERS", 1L));
        assertThat(mixed).containsExactly(RowRef.of("customer", 1L), RowRef.of("Orders", 1L));
        assertThat(lower).containsExactly(RowRef.of("customer", 1L), RowRef.of("orders", 1L));

        // Key columns: "ID" < "id" in raw order would put row 2 first for one caller only.
        assertThat(sort(dialect, NEVER, RowRef.of("t", "id", 2L), RowRef.of("t", "ID", 1L)))
                .containsExactly(RowRef.of("t", "ID", 1L), RowRef.of("t", "id", 2L));
        assertThat(sort(dialect, NEVER, RowRef.of("t", "ID", 2L), RowRef.of("t", "id", 1L)))
                .containsExactly(RowRef.of("t", "id", 1L), RowRef.of("t", "ID", 2L));
    }

    @ParameterizedTest
    @EnumSource(Dialect.class)
    void aSchemaQualifiedNameTakesThePlaceOfItsTable(Dialect dialect) throws SQLException {
        // Raw order: "a_t" < "b_t" < "public.a_t" < "public.b_t": two callers would lock a, b and b, a.
        assertThat(sort(dialect, NEVER, RowRef.of("public.b_t", 1L), RowRef.of("a_t", 1L)))
                .containsExactly(RowRef.of("a_t", 1L), RowRef.of("public.b_t", 1L));
        assertThat(sort(dialect, NEVER, RowRef.of("b_t", 1L), RowRef.of("public.a_t", 1L)))
                .containsExactly(RowRef.of("public.a_t", 1L), RowRef.of("b_t", 1L));
    }

    @ParameterizedTest
    @EnumSource(Dialect.class)
    void anUnqualifiedNameIsOrderedAsTheSchemaItMeansAmongTablesOfTheSameName(Dialect dialect) throws SQLException {
        // Tables "orders" in schemas a and b. A caller whose current schema is b writes "orders" for b.orders.
        LockOrder.SchemaResolver currentIsB = table -> "b";
        List<RowRef> qualified = sort(dialect, NEVER, RowRef.of("b.orders", 1L), RowRef.of("a.orders", 1L));
        List<RowRef> partly = sort(dialect, currentIsB, RowRef.of("orders", 1L), RowRef.of("a.orders", 1L));
        assertThat(qualified).containsExactly(RowRef.of("a.orders", 1L), RowRef.of("b.orders", 1L));
        assertThat(partly).containsExactly(RowRef.of("a.orders", 1L), RowRef.of("orders", 1L));
        // And the other way round: current schema a.
        assertThat(sort(dialect, table -> "a", RowRef.of("orders", 1L), RowRef.of("b.orders", 1L)))
                .containsExactly(RowRef.of("orders", 1L), RowRef.of("b.orders", 1L));
    }

    @Test
    void theSchemaIsReadOnceAndOnlyWhenItCanChangeTheOrder() throws SQLException {
        AtomicInteger reads = new AtomicInteger();
        LockOrder.SchemaResolver counting = table -> {
            reads.incrementAndGet();
            return "public";
        };
        sort(
                Dialect.POSTGRESQL,
                counting,
                RowRef.of("orders", 1L),
                RowRef.of("public.orders", 2L),
                RowRef.of("x.t", 1L));
        assertThat(reads).hasValue(0);
        sort(
                Dialect.POSTGRESQL,
                counting,
                RowRef.of("orders", 1L),
                RowRef.of("public.orders", 1L),
                RowRef.of("orders", 2L),
                RowRef.of("public.orders", 2L));
        assertThat(reads).hasValue(1);
    }

    @Test
    void oneRowSpelledTwiceIsLockedOnceWhereNamesIgnoreCase() throws SQLException {
        for (Dialect dialect : List.of(Dialect.POSTGRESQL, Dialect.H2)) {
            assertThat(sort(
                            dialect,
                            PUBLIC,
                            RowRef.of("public.orders", 1L),
                            RowRef.of("Orders", "ID", 1L),
                            RowRef.of("orders", 1L),
                            RowRef.of("PUBLIC.ORDERS", 1L)))
                    .hasSize(1);
        }
        // MariaDB table names may be case-sensitive: both are locked (harmless if one table).
        assertThat(sort(
                        Dialect.MARIADB,
                        table -> "test",
                        RowRef.of("test.orders", 1L),
                        RowRef.of("Orders", "ID", 1L),
                        RowRef.of("orders", 1L),
                        RowRef.of("orders", "ID", 1L)))
                .containsExactly(RowRef.of("Orders", "ID", 1L), RowRef.of("orders", "ID", 1L));
    }

    /**
     * The deadlock-freedom property itself: whatever spellings and input order each caller uses,
     * any two rows that both callers lock are locked in the same relative order.
     */
    @ParameterizedTest
    @EnumSource(Dialect.class)
    void everyTwoCallersAgreeOnTheOrderOfTheRowsTheyShare(Dialect dialect) throws SQLException {
        Random random = new Random(42);
        String[] schemas = {"public", "other"};
        for (int round = 0; round < 2000; round++) {
            String current = schemas[random.nextInt(2)];
            List<List<Object>> first = physical(sort(dialect, spellings(random, current)), current);
            String current2 = schemas[random.nextInt(2)];
            List<List<Object>> second = physical(sort(dialect, spellings(random, current2)), current2);
            List<List<Object>> shared = new ArrayList<>(first);
            shared.retainAll(second);
            List<List<Object>> inSecond = new ArrayList<>(second);
            inSecond.retainAll(first);
            assertThat(inSecond).as("round %d: %s vs %s", round, first, second).isEqualTo(shared);
        }
    }

    private static List<RowRef> sort(Dialect dialect, Spelled spelled) throws SQLException {
        return LockOrder.sort(dialect, spelled.rows, table -> spelled.current);
    }

    private record Spelled(List<RowRef> rows, String current) {}

    private static Spelled spellings(Random random, String current) {
        List<RowRef> rows = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            String schema = random.nextBoolean() ? "public" : "other";
            String table = random.nextBoolean() ? "orders" : "lines";
            String spelledTable = random.nextBoolean() ? table : table.toUpperCase();
            String name = schema.equals(current) && random.nextBoolean() ? spelledTable : schema + "." + spelledTable;
            String column = random.nextBoolean() ? "id" : "ID";
            rows.add(RowRef.of(name, column, 1L + random.nextInt(3)));
        }
        Collections.shuffle(rows, random);
        return new Spelled(rows, current);
    }

    /** The real row (schema, table, key) a ref means for a caller whose current schema is {@code current}. */
    private static List<List<Object>> physical(List<RowRef> rows, String current) {
        List<List<Object>> out = new ArrayList<>();
        for (RowRef r : rows) {
            String value = r.table().value().toLowerCase();
            String schema = value.contains(".") ? value.substring(0, value.indexOf('.')) : current;
            String table = value.substring(value.indexOf('.') + 1);
            List<Object> row = List.of(schema, table, r.key());
            if (!out.contains(row)) {
                out.add(row);
            }
        }
        return out;
    }
}
