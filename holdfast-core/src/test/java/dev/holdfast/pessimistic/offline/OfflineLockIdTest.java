package dev.holdfast.pessimistic.offline;

import org.junit.jupiter.api.Test;

import java.security.SecureRandom;
import java.util.Base64;
import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link LockId}: shape, parsing of form input, and that it never leaks through toString. */
class OfflineLockIdTest {

    @Test
    void generatedIdsCarry128RandomBitsAndRoundTrip() {
        SecureRandom random = new SecureRandom();
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 10_000; i++) {
            LockId id = LockId.generate(random);
            assertThat(id.getValue()).hasSize(LockId.LENGTH).matches("[A-Za-z0-9_-]{21}[AQgw]");
            assertThat(Base64.getUrlDecoder().decode(id.getValue())).hasSize(16);
            assertThat(LockId.parse(id.getValue())).isEqualTo(id).hasSameHashCodeAs(id);
            assertThat(new LockId(id.getValue())).isEqualTo(id);
            seen.add(id.getValue());
        }
        assertThat(seen).hasSize(10_000);
    }

    @Test
    void toStringNeverShowsTheWholeToken() {
        LockId id = LockId.generate(new SecureRandom());
        assertThat(id.toString())
                .doesNotContain(id.getValue())
                .contains(id.getValue().substring(0, 4));
    }

    @Test
    void malformedFormInputIsATypedErrorAndTryParseIsEmpty() {
        String[] bad = {
            null,
            "",
            "short",
            "A".repeat(23),
            "AAAAAAAAAAAAAAAAAAAA=A",
            "AAAAAAAAAAAAAAAAAAAA A",
            "AAAAAAAAAAAAAAAAAAAAAB",
            "ÄAAAAAAAAAAAAAAAAAAAAA",
            "AAAAAAAAAAAAAAAAAAAA'A"
        };
        for (String value : bad) {
            assertThatThrownBy(() -> LockId.parse(value))
                    .as(String.valueOf(value))
                    .isInstanceOf(MalformedLockIdException.class)
                    .isInstanceOf(IllegalArgumentException.class);
            assertThat(LockId.tryParse(value)).isEmpty();
        }
        assertThat(LockId.tryParse("AAAAAAAAAAAAAAAAAAAAAA")).isPresent();
    }
}
