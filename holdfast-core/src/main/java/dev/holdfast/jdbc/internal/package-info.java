/**
 * Internal to Holdfast's modules, not API: it may change in any release. How Holdfast runs SQL, kept
 * apart from what it runs: borrowing a connection so that a statement commits on its own
 * ({@link dev.holdfast.jdbc.internal.Jdbc#autocommit}), an own transaction with the connection's
 * settings restored ({@link dev.holdfast.jdbc.internal.Jdbc#transaction}), rolling back before an
 * error is wrapped, repeating a statement that lost a race ({@link dev.holdfast.jdbc.internal.Retry}),
 * and the one check of names and keys that every technique stores ({@link dev.holdfast.jdbc.internal.Names}).
 */
@NullMarked
package dev.holdfast.jdbc.internal;

import org.jspecify.annotations.NullMarked;
