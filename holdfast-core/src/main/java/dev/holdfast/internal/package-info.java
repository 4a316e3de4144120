/**
 * Internal to Holdfast's modules, not API: it may change in any release. Argument and invariant checks shared by
 * every module, so that one rule holds across the API: every invalid argument, null included, raises
 * {@link java.lang.IllegalArgumentException} (or a subclass) before anything is read or written.
 */
@NullMarked
package dev.holdfast.internal;

import org.jspecify.annotations.NullMarked;
