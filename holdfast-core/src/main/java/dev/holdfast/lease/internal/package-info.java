/**
 * Internal: the machinery behind {@code dev.holdfast.lease.LeaseService}: one statement per call
 * ({@link dev.holdfast.lease.internal.LeaseCalls}), SQL per database, the blocking acquire, batching,
 * cohort hand-off, renewals and releases. It speaks its own values ({@link
 * dev.holdfast.lease.internal.LeaseRow}, {@link dev.holdfast.lease.internal.NotHeld}) so that it never
 * depends on the public package. Only Holdfast's own tests and benchmarks use it directly; it may change
 * in any release.
 */
@NullMarked
package dev.holdfast.lease.internal;

import org.jspecify.annotations.NullMarked;
