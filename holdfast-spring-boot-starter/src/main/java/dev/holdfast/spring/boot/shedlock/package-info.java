/** The ShedLock {@code LockProvider} the starter configures on Holdfast's leases, with holdfast-shedlock. */
@NullMarked
package dev.holdfast.spring.boot.shedlock;

import org.jspecify.annotations.NullMarked;
