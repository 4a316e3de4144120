package dev.holdfast.spring.boot.web;

import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.pessimistic.offline.MalformedLockIdException;
import org.springframework.core.convert.converter.Converter;

/**
 * Binds a {@link LockId} from a form field or request parameter ({@code @RequestParam LockId lockId}).
 * A malformed value fails the binding with a {@link MalformedLockIdException} as the cause, which
 * {@link OfflineLockExceptionHandler} answers with 400.
 */
public final class LockIdConverter implements Converter<String, LockId> {

    @Override
    public LockId convert(String source) {
        return LockId.parse(source.strip());
    }
}
