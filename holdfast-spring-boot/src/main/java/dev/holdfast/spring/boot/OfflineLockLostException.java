package dev.holdfast.spring.boot;

import dev.holdfast.offline.NoLockException;
import org.springframework.dao.PessimisticLockingFailureException;

/**
 * Spring's view of {@link NoLockException} and its subtypes: the presented lock id authorizes nothing
 * (expired, released, broken, forged, or another resource's or owner's). The Holdfast exception is
 * the {@linkplain #getCause() cause}.
 */
public class OfflineLockLostException extends PessimisticLockingFailureException {

    public OfflineLockLostException(NoLockException cause) {
        super(cause.getMessage(), cause);
    }

    @Override
    public NoLockException getCause() {
        return (NoLockException) super.getCause();
    }
}
