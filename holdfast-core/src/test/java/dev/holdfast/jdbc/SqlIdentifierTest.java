package dev.holdfast.jdbc;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SqlIdentifierTest {

    private static final Pattern SAFE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?");

    @ParameterizedTest
    @ValueSource(strings = {"locks", "holdfast_locks", "_x", "Shop.purchase_order", "a1"})
    void acceptsPlainIdentifiers(String name) {
        assertThat(SqlIdentifier.of(name).value()).isEqualTo(name);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                " ",
                "1abc",
                "a b",
                "locks; DROP TABLE x",
                "a--b",
                "\"quoted\"",
                "a.b.c",
                ".a",
                "a.",
                "select",
                "ORDER",
                "tab\u0000le",
                "täble",
                "x'y"
            })
    void rejectsAnythingElse(String name) {
        assertThatThrownBy(() -> SqlIdentifier.of(name))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("Not a plain SQL identifier");
    }

    @Test
    void rejectsNullAndOverlongAndQualifiedWhereUnqualifiedIsRequired() {
        assertThatThrownBy(() -> SqlIdentifier.of(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SqlIdentifier.of("a".repeat(64))).isInstanceOf(IllegalArgumentException.class);
        assertThat(SqlIdentifier.of("a".repeat(63)).value()).hasSize(63);
        assertThatThrownBy(() -> SqlIdentifier.unqualified("s.t")).isInstanceOf(IllegalArgumentException.class);
    }

    @Property
    void everyAcceptedStringIsSafeToEmbed(@ForAll @StringLength(max = 70) String candidate) {
        try {
            SqlIdentifier id = SqlIdentifier.of(candidate);
            assertThat(SAFE.matcher(id.value()).matches()).isTrue();
        } catch (IllegalArgumentException rejected) {
            assertThat(rejected.getMessage()).isNotBlank();
        }
    }
}
