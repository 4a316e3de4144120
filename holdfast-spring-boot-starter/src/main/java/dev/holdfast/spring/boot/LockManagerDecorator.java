package dev.holdfast.spring.boot;

import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockManager;
import org.springframework.core.Ordered;

/**
 * Wraps the {@link LockManager} calls of the auto-configured {@link JdbcLockManager}
 * ({@link JdbcLockManager.Builder#decoratedBy}), so that whichever type an application injects
 * ({@code JdbcLockManager} or {@code LockManager}: one bean) goes through it. Every bean of this type is applied, in
 * {@link Ordered} order: the first is the outermost; the starter's own use the orders of {@link LeasesDecorator}.
 */
@FunctionalInterface
public interface LockManagerDecorator {

    /**
     * @param locks the calls to wrap (the lock manager's own, or an inner decorator's); never the lock manager itself
     * @return a lock manager that delegates to {@code locks}
     */
    LockManager decorate(LockManager locks);
}
