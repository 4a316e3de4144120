/**
 * Distributed leases with fencing tokens (a lock for one job across servers): {@link
 * dev.holdfast.lease.LeaseService} grants a named lease for a time in one statement, by database time,
 * with a token that grows with every grant; {@link dev.holdfast.lease.LeaseGuard} keeps it alive and
 * tells the work when it is lost; {@link dev.holdfast.lease.FencedUpdate} makes a write that an older
 * token can no longer win.
 */
@NullMarked
package dev.holdfast.lease;

import org.jspecify.annotations.NullMarked;
