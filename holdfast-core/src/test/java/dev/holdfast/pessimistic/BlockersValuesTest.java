package dev.holdfast.pessimistic;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The values {@link Blocker} and {@link Blockers}: limits, consistency and how they read. */
class BlockersValuesTest {

    private static Blocker blocker(String id, String blocks) {
        return new Blocker(
                id,
                blocks,
                "app",
                "shop",
                "10.0.0.7",
                Instant.parse("2026-01-02T03:04:05Z"),
                "idle in transaction",
                "SELECT 1");
    }

    @Test
    void aLongListIsCutWithACountOfTheRest() {
        List<Blocker> many = new ArrayList<>();
        for (int i = 1; i <= Blockers.MAX_SESSIONS + 3; i++) {
            many.add(blocker(Integer.toString(100 + i), "7"));
        }
        Blockers blockers = Blockers.of("7", many);
        assertThat(blockers.known()).isTrue();
        assertThat(blockers.sessions()).hasSize(Blockers.MAX_SESSIONS).containsExactlyElementsOf(many.subList(0, 10));
        assertThat(blockers.omitted()).isEqualTo(3);
        assertThat(blockers.toString())
                .startsWith("blocked by session 101 [user app, application shop, client 10.0.0.7,"
                        + " transaction since 2026-01-02T03:04:05Z, state idle in transaction, statement \"SELECT 1\"]")
                .endsWith("; and 3 more");
    }

    @Test
    void aChainSaysWhomEachBlockerBlocks() {
        Blockers blockers = Blockers.of("7", List.of(blocker("8", "7"), blocker("9", "8")));
        assertThat(blockers.direct()).extracting(Blocker::sessionId).containsExactly("8");
        assertThat(blockers.toString()).contains("session 9 (blocking 8) [");
    }

    @Test
    void unknownBlockersSayWhy() {
        Blockers unknown = Blockers.unknown("no DataSource");
        assertThat(unknown.known()).isFalse();
        assertThat(unknown.sessions()).isEmpty();
        assertThat(unknown.direct()).isEmpty();
        assertThat(unknown.waitingSession()).isNull();
        assertThat(unknown).hasToString("blockers unknown: no DataSource");
    }

    @Test
    void contradictionsAreRefused() {
        assertThatThrownBy(() -> Blockers.unknown(" ")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Blockers.unknown(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Blockers.of("7", List.of())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Blockers(null, List.of(blocker("8", "7")), 0, null))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Blockers("7", List.of(blocker("8", "7")), -1, null))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Blockers(null, List.of(blocker("8", "7")), 0, "why"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Blocker(" ", "7", null, null, null, null, null, null))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aLongStatementIsCut() {
        Blocker b = new Blocker("8", "7", null, null, null, null, null, "x".repeat(500));
        assertThat(b.statement()).hasSize(Blocker.MAX_STATEMENT_LENGTH).endsWith("…");
        assertThat(b.describe("7")).isEqualTo("session 8 [statement \"" + b.statement() + "\"]");
    }
}
