/**
 * Contract suites for Holdfast's interfaces: abstract JUnit classes that run every rule of an
 * interface against an implementation you supply, once per database of the matrix (H2, PostgreSQL,
 * MariaDB; see {@link dev.holdfast.testing.DatabaseTest}). Extend one, implement its factory, and your
 * implementation or decorator is held to the same contract as Holdfast's own JDBC implementations.
 */
@NullMarked
package dev.holdfast.testing.contract;

import org.jspecify.annotations.NullMarked;
