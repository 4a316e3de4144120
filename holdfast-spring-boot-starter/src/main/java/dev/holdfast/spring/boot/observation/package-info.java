/**
 * Micrometer observations of Holdfast: every row lock wait, offline {@code tryLock}, lease acquire and version
 * conflict, with documented names and keys ({@link dev.holdfast.spring.boot.observation.HoldfastObservation}) and
 * conventions an application may replace.
 */
@NullMarked
package dev.holdfast.spring.boot.observation;

import org.jspecify.annotations.NullMarked;
