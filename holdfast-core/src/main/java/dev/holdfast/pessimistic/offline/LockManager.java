package dev.holdfast.pessimistic.offline;

import java.time.Duration;

/**
 * Offline pessimistic locks (Fowler's Pessimistic Offline Lock): a user takes a lock on an
 * aggregate when the edit page opens, the page keeps it alive, and the submit checks it. The four
 * classic operations — {@link #tryLock(String, String)}, {@link #checkLock(LockId)},
 * {@link #releaseLock(LockId)}, {@link #extendLockExpiration(LockId, long)} — keep their signatures; the
 * overloads add an owner, {@link Duration}s, and checks bound to the resource and the owner.
 *
 * <pre>{@code
 * LockId lockId = locks.tryLock("purchase_order", orderNo, user);       // page opens; put getValue() in the form
 * locks.extendLockExpiration(lockId, user, Duration.ofMinutes(1));      // heartbeat
 * locks.checkLock(LockId.parse(form.lockId()), "purchase_order", orderNo, user); // on submit, before changing anything
 * locks.releaseLock(lockId, user);
 * }</pre>
 *
 * <p>Rules every implementation keeps:
 * <ul>
 *   <li>Each call commits on its own, independent of any transaction the caller has open (as if run
 *       {@code REQUIRES_NEW}): a rolled-back edit neither loses nor leaks its lock,
 *       and other users see a lock at once.</li>
 *   <li>Expiry is decided by database time only. An expired lock authorizes nothing: checking,
 *       extending or releasing it raises {@link LockExpiredException}.</li>
 *   <li>A type is 1 to {@value #MAX_TYPE_LENGTH} characters, an id 1 to {@value #MAX_ID_LENGTH}
 *       and an owner 1 to {@value #MAX_OWNER_LENGTH}; none may be blank or contain control
 *       characters or unpaired surrogates. Violations raise {@link IllegalArgumentException} before
 *       any SQL runs.</li>
 *   <li>With owner binding on (an implementation option), the owner-less forms raise
 *       {@link IllegalStateException}, so no call can forget to prove who it is for. An owner
 *       passed explicitly is always checked.</li>
 * </ul>
 */
public interface LockManager {

    /** Longest lock type, in characters (code points). */
    int MAX_TYPE_LENGTH = 100;

    /** Longest resource id, in characters (code points). */
    int MAX_ID_LENGTH = 200;

    /** Longest owner name, in characters (code points). */
    int MAX_OWNER_LENGTH = 200;

    /**
     * Takes the lock on {@code type}/{@code id} without an owner, for the default expiry.
     *
     * @param type the kind of resource, such as {@code purchase_order}: 1 to
     *             {@value #MAX_TYPE_LENGTH} characters
     * @param id   the resource's id within its type: 1 to {@value #MAX_ID_LENGTH} characters
     * @return a new, unguessable lock id
     * @throws AlreadyLockedException   if a live lock is held (who and until when are in it)
     * @throws IllegalArgumentException for a bad type or id
     * @throws IllegalStateException    if owner binding is on
     */
    LockId tryLock(String type, String id);

    /**
     * Takes the lock for {@code owner}, for the default expiry; see
     * {@link #tryLock(String, String, String, Duration)}.
     *
     * @param type  the kind of resource: 1 to {@value #MAX_TYPE_LENGTH} characters
     * @param id    the resource's id within its type: 1 to {@value #MAX_ID_LENGTH} characters
     * @param owner who takes the lock, such as a user name: 1 to {@value #MAX_OWNER_LENGTH} characters
     * @return a new, unguessable lock id
     * @throws AlreadyLockedException   if a live lock is held, even by the same owner
     * @throws IllegalArgumentException for a bad type, id or owner
     */
    LockId tryLock(String type, String id, String owner);

    /**
     * Takes the lock on {@code type}/{@code id} for {@code owner}: a free, released or expired lock
     * is taken in one atomic statement; a live one is refused.
     *
     * @param type   the kind of resource: 1 to {@value #MAX_TYPE_LENGTH} characters
     * @param id     the resource's id within its type: 1 to {@value #MAX_ID_LENGTH} characters
     * @param owner  who takes the lock, such as a user name: 1 to {@value #MAX_OWNER_LENGTH} characters
     * @param expiry how long the lock lives unless extended; positive, at most the implementation's maximum
     * @return a new, unguessable lock id
     * @throws AlreadyLockedException   if a live lock is held, even by the same owner (a second
     *                                  browser tab must not silently share the first one's lock)
     * @throws IllegalArgumentException for a bad type, id, owner or expiry
     */
    LockId tryLock(String type, String id, String owner, Duration expiry);

    /**
     * Takes the lock on {@code type}/{@code id} for {@code owner}, like {@link #tryLock(String, String,
     * String, Duration)}, and also when {@code owner} holds it already (a reloaded edit page, a second
     * tab): that live lock then gets a fresh id and expiry, and its earlier id authorizes nothing any
     * more ({@code checkLock}, release and extension with it fail), so a stale tab cannot save over the
     * new one. Whatever the interleaving of such calls, exactly one id is live afterwards.
     *
     * @param type   the kind of resource: 1 to {@value #MAX_TYPE_LENGTH} characters
     * @param id     the resource's id within its type: 1 to {@value #MAX_ID_LENGTH} characters
     * @param owner  who takes the lock: 1 to {@value #MAX_OWNER_LENGTH} characters
     * @param expiry how long the lock lives unless extended, counted from now also for a lock the owner
     *               held; positive, at most the implementation's maximum
     * @return the new id, and whether it replaced an earlier id of the owner
     * @throws AlreadyLockedException   if another owner holds a live lock
     * @throws IllegalArgumentException for a bad type, id, owner or expiry
     */
    Reacquired reacquire(String type, String id, String owner, Duration expiry);

    /**
     * {@link #reacquire(String, String, String, Duration)} for the default expiry.
     *
     * @param type  the kind of resource: 1 to {@value #MAX_TYPE_LENGTH} characters
     * @param id    the resource's id within its type: 1 to {@value #MAX_ID_LENGTH} characters
     * @param owner who takes the lock: 1 to {@value #MAX_OWNER_LENGTH} characters
     * @return the new id, and whether it replaced an earlier id of the owner
     * @throws AlreadyLockedException   if another owner holds a live lock
     * @throws IllegalArgumentException for a bad type, id or owner
     */
    Reacquired reacquire(String type, String id, String owner);

    /**
     * Succeeds if {@code lockId} is a live lock.
     *
     * @param lockId the id {@code tryLock} or {@code reacquire} returned, or one parsed from a form
     * @throws LockEndedException       if its lock was released, broken, replaced by the owner's
     *                                  re-acquire, or taken over after it expired: how, by whom, when,
     *                                  and who holds it now
     * @throws LockNotHeldException     if it authorizes nothing and its end is unknown (never issued,
     *                                  purged)
     * @throws LockExpiredException     if it has expired
     * @throws IllegalArgumentException if {@code lockId} is null
     * @throws IllegalStateException    if owner binding is on
     */
    void checkLock(LockId lockId);

    /**
     * Succeeds if {@code lockId} is a live lock on exactly {@code type}/{@code id}.
     *
     * @param lockId the id to check
     * @param type   the type the lock must be for
     * @param id     the id the lock must be for
     * @throws ForeignLockException     with {@link ForeignLockException.Reason#OTHER_RESOURCE} if it
     *                                  is a lock on something else
     * @throws IllegalArgumentException for a null lock id, or a bad type or id
     * @throws IllegalStateException    if owner binding is on
     * @see #checkLock(LockId)
     */
    void checkLock(LockId lockId, String type, String id);

    /**
     * Succeeds if {@code lockId} is a live lock on exactly {@code type}/{@code id} held by {@code owner}.
     *
     * @param lockId the id to check
     * @param type   the type the lock must be for
     * @param id     the id the lock must be for
     * @param owner  the owner the lock must be held by
     * @throws ForeignLockException     with {@link ForeignLockException.Reason#OTHER_OWNER} if another
     *                                  owner (or none) holds it
     * @throws IllegalArgumentException for a null lock id, or a bad type, id or owner
     * @see #checkLock(LockId, String, String)
     */
    void checkLock(LockId lockId, String type, String id, String owner);

    /**
     * Releases a live lock; the resource is free at once.
     *
     * @param lockId the id of the lock to release
     * @throws LockNotHeldException     if it was already released, taken over or never issued
     * @throws LockExpiredException     if it has expired (it is free anyway)
     * @throws IllegalArgumentException if {@code lockId} is null
     * @throws IllegalStateException    if owner binding is on
     */
    void releaseLock(LockId lockId);

    /**
     * Releases a live lock held by {@code owner}.
     *
     * @param lockId the id of the lock to release
     * @param owner  the owner the lock must be held by
     * @throws ForeignLockException     with {@link ForeignLockException.Reason#OTHER_OWNER} if another
     *                                  owner holds it
     * @throws IllegalArgumentException for a null lock id or a bad owner
     * @see #releaseLock(LockId)
     */
    void releaseLock(LockId lockId, String owner);

    /**
     * Adds {@code incMillis} milliseconds to the lock's expiry (the classic form).
     *
     * @param lockId    the id of the lock to extend
     * @param incMillis the milliseconds to add: 1 to the implementation's maximum expiry
     * @throws IllegalArgumentException for a null lock id or an increment out of range
     * @throws IllegalStateException    if owner binding is on
     * @see #extendLockExpiration(LockId, String, Duration)
     */
    void extendLockExpiration(LockId lockId, long incMillis);

    /**
     * Adds {@code increment} to the expiry of a live lock.
     *
     * @param lockId    the id of the lock to extend
     * @param increment how much to add: positive, at most the implementation's maximum expiry
     * @throws IllegalArgumentException for a null lock id, or a zero, negative or too large increment
     * @throws IllegalStateException    if owner binding is on
     * @see #extendLockExpiration(LockId, String, Duration)
     */
    void extendLockExpiration(LockId lockId, Duration increment);

    /**
     * Adds {@code increment} to the expiry of a live lock held by {@code owner}. The new expiry is
     * capped at the implementation's maximum expiry from now, so a heartbeat that keeps adding
     * cannot push a lock into the far future.
     *
     * @param lockId    the id of the lock to extend
     * @param owner     the owner the lock must be held by
     * @param increment positive, at most the implementation's maximum expiry
     * @throws LockExpiredException     if the lock has already expired: an expired lock is never revived
     * @throws LockNotHeldException     if it was released, taken over or never issued
     * @throws ForeignLockException     if another owner holds it
     * @throws IllegalArgumentException for a null lock id, a bad owner, or a zero, negative or too
     *                                  large increment
     */
    void extendLockExpiration(LockId lockId, String owner, Duration increment);
}
