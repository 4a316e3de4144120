package dev.holdfast.lease.internal;

/**
 * The service's batching, as the internals take it: {@code dev.holdfast.lease.Batching} one to one
 * (this package cannot use that type: it would make a cycle of the two packages).
 */
public enum BatchMode {
    /** No batching: no batching machinery is built, every call is a statement of its own. */
    OFF,
    /** Calls that queue while a statement of their kind is in flight go together in the next. */
    CONCURRENT
}
