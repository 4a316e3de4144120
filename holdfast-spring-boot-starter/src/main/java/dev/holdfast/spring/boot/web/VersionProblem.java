package dev.holdfast.spring.boot.web;

import dev.holdfast.internal.Invariants;
import dev.holdfast.optimistic.StaleRow;
import dev.holdfast.optimistic.VersionConflictException;
import dev.holdfast.optimistic.VersionStamp;
import dev.holdfast.optimistic.offline.TamperedStateException;
import org.springframework.http.ProblemDetail;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What went wrong with a version, for a page or, as an {@link HoldfastProblem}, a problem-detail response.
 *
 * @param status    409 for a stale version, 400 for a missing or malformed version or a tampered state
 * @param code      a stable code: {@code version-conflict}, {@code bad-version}, {@code tampered-state}
 * @param title     a short headline
 * @param detail    what happened and that nothing was changed
 * @param staleRows for a conflict, every stale row: what changed, by whom, when (database time); else empty
 */
public record VersionProblem(int status, String code, String title, String detail, List<StaleRow> staleRows)
        implements HoldfastProblem {

    /**
     * A problem with its own copy of {@code staleRows}.
     *
     * @param status    409 for a stale version, 400 for a missing or malformed version or a tampered state
     * @param code      a stable code: {@code version-conflict}, {@code bad-version}, {@code tampered-state}
     * @param title     a short headline
     * @param detail    what happened and that nothing was changed
     * @param staleRows for a conflict, every stale row; else empty
     * @throws NullPointerException if {@code staleRows} is null or contains null
     */
    public VersionProblem {
        staleRows = List.copyOf(staleRows);
    }

    /**
     * The problem for a stale version.
     *
     * @param e the conflict
     * @return a 409 {@code version-conflict} problem with every stale row of {@code e}
     */
    public static VersionProblem of(VersionConflictException e) {
        return new VersionProblem(
                409,
                "version-conflict",
                e.staleRows().size() == 1 ? "Changed while you were looking at it" : "Changed while you were working",
                capitalize(message(e)) + ". Nothing was saved. Reload to see the current state and decide again.",
                e.staleRows());
    }

    /**
     * The problem for a form that carried no version, or something that is not one.
     *
     * @param e the refused form value
     * @return a 400 {@code bad-version} problem
     */
    public static VersionProblem badVersion(ClientVersion.MalformedVersionException e) {
        return new VersionProblem(
                400,
                "bad-version",
                e.missing() ? "The form carried no version" : "The form carried a damaged version",
                "Without the version the page showed, nobody can tell which state you decided on, so "
                        + capitalize(message(e)) + " was refused. Nothing was changed. Reload the page and try again.",
                List.of());
    }

    /**
     * The problem for a sealed business-transaction state that did not verify.
     *
     * @param e the refusal
     * @return a 400 {@code tampered-state} problem
     */
    public static VersionProblem of(TamperedStateException e) {
        return new VersionProblem(
                400,
                "tampered-state",
                "The form was altered",
                "The form's saved state did not verify (it was altered, damaged, or belongs to another session). "
                        + "Nothing was changed. Start again from the beginning.",
                List.of());
    }

    /**
     * For a conflict, {@code staleRows}: per stale row its {@code entity}, {@code id}, {@code expectedVersion},
     * {@code currentVersion}, {@code deleted}, {@code modifiedBy}, {@code modified} and {@code description}.
     */
    @Override
    public void addProperties(ProblemDetail problem) {
        if (!staleRows.isEmpty()) {
            List<Map<String, Object>> rows = new ArrayList<>();
            for (StaleRow row : staleRows) {
                Map<String, Object> fields = new LinkedHashMap<>();
                fields.put("entity", row.entity());
                fields.put("id", String.valueOf(row.id()));
                fields.put("expectedVersion", row.expectedVersion());
                fields.put("currentVersion", row.currentVersion().orElse(null));
                fields.put("deleted", row.deleted());
                VersionStamp current = row.current(); // null if the row was deleted
                Instant modified = current == null ? null : current.modified();
                fields.put("modifiedBy", current == null ? null : current.modifiedBy());
                fields.put("modified", modified == null ? null : modified.toString());
                fields.put("description", row.describe());
                rows.add(fields);
            }
            problem.setProperty("staleRows", rows);
        }
    }

    /** Holdfast's exceptions and MalformedVersionException are always built with a message. */
    private static String message(RuntimeException e) {
        return Invariants.nonNull(e.getMessage(), "built with a message");
    }

    private static String capitalize(String s) {
        return s.isEmpty() ? s : Character.toUpperCase(s.charAt(0)) + s.substring(1);
    }
}
