package dev.holdfast.spring.boot.metrics;

import dev.holdfast.internal.Arguments;
import dev.holdfast.pessimistic.DeadlockException;
import dev.holdfast.pessimistic.LockTimeoutException;
import dev.holdfast.pessimistic.LockWait;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.RowRef;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

import java.time.Duration;

/**
 * Meters every row lock of {@link PessimisticLocks} (give it to {@link PessimisticLocks#observedBy}):
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th></tr>
 *   <tr><td>{@value #WAIT}</td><td>timer: how long each lock statement took, waiting included</td>
 *       <td>{@code table}, {@code outcome} (locked, absent, timeout, deadlock, error)</td></tr>
 *   <tr><td>{@value #TIMEOUTS}</td><td>counter: {@link LockTimeoutException}s (bound ran out, or
 *       no-wait found the row held)</td><td>{@code table}</td></tr>
 * </table>
 *
 * Table names are the only tag with values from the application; they are few. Built untimed, it leaves out
 * {@value #WAIT}: where an observation of each lock ({@code PessimisticLockObservations}) goes to a meter handler,
 * that handler's timer {@code holdfast.pessimistic.lock} is the one timing of the call.
 */
public final class PessimisticLockMetrics implements PessimisticLocks.Observer {

    /** The name of the timer of lock statements, waiting included, tagged {@code table} and {@code outcome}. */
    public static final String WAIT = "holdfast.pessimistic.lock.wait";
    /** The name of the counter of {@link LockTimeoutException}s, tagged {@code table}. */
    public static final String TIMEOUTS = "holdfast.pessimistic.lock.timeouts";

    private final MeterRegistry registry;
    private final boolean timed;

    /**
     * Times the locks ({@value #WAIT}) and counts the timeouts.
     *
     * @param registry where the meters are registered
     * @throws IllegalArgumentException if {@code registry} is null
     */
    public PessimisticLockMetrics(MeterRegistry registry) {
        this(registry, true);
    }

    /**
     * Counts the timeouts, and times the locks if {@code timed}.
     *
     * @param registry where the meters are registered
     * @param timed    whether to time the locks ({@value #WAIT}); the timeouts are counted either way
     * @throws IllegalArgumentException if {@code registry} is null
     */
    public PessimisticLockMetrics(MeterRegistry registry, boolean timed) {
        this.registry = Arguments.notNull(registry, "registry");
        this.timed = timed;
    }

    @Override
    public void lockEnded(
            RowRef row, LockWait wait, Duration waited, boolean locked, @Nullable RuntimeException failure) {
        String table = row.table().value();
        String outcome = failure == null
                ? (locked ? "locked" : "absent")
                : failure instanceof LockTimeoutException
                        ? "timeout"
                        : failure instanceof DeadlockException ? "deadlock" : "error";
        if (timed) {
            Timer.builder(WAIT)
                    .description("Pessimistic row lock statements, waiting included")
                    .tag("table", table)
                    .tag("outcome", outcome)
                    .register(registry)
                    .record(waited);
        }
        if (failure instanceof LockTimeoutException) {
            Counter.builder(TIMEOUTS)
                    .description("Row lock waits that ran out of their bound")
                    .tag("table", table)
                    .register(registry)
                    .increment();
        }
    }
}
