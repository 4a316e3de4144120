package dev.holdfast.spring.boot;

import dev.holdfast.pessimistic.LockWait;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.RowRef;
import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Several {@link PessimisticLocks.Observer}s as one (e.g. the metrics and the observations). */
final class Observers implements PessimisticLocks.Observer {

    private final List<PessimisticLocks.Observer> observers;

    private Observers(List<PessimisticLocks.Observer> observers) {
        this.observers = List.copyOf(observers);
    }

    /** Null for none, the observer itself for one. */
    static PessimisticLocks.@Nullable Observer all(List<PessimisticLocks.Observer> observers) {
        return observers.isEmpty() ? null : observers.size() == 1 ? observers.get(0) : new Observers(observers);
    }

    @Override
    public void lockEnded(
            RowRef row, LockWait wait, Duration waited, boolean locked, @Nullable RuntimeException failure) {
        for (PessimisticLocks.Observer o : observers) {
            try {
                o.lockEnded(row, wait, waited, locked, failure);
            } catch (RuntimeException ignored) {
                // one observer's failure does not keep the others from being told
            }
        }
    }

    /** Starts every observer's attempt; ends them in reverse order, so scopes close as they opened. */
    @Override
    public Attempt lockStarting(RowRef row, LockWait wait) {
        List<Attempt> attempts = new ArrayList<>(observers.size());
        for (PessimisticLocks.Observer o : observers) {
            try {
                attempts.add(o.lockStarting(row, wait));
            } catch (RuntimeException ignored) {
                // that observer does not see this lock
            }
        }
        return (waited, locked, failure) -> {
            for (int i = attempts.size() - 1; i >= 0; i--) {
                try {
                    attempts.get(i).ended(waited, locked, failure);
                } catch (RuntimeException ignored) {
                    // one observer's failure does not keep the others from being told
                }
            }
        };
    }
}
