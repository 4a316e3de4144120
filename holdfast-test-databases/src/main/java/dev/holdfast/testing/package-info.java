/**
 * JUnit 5 support for testing against real databases: {@link dev.holdfast.testing.DatabaseTest} runs a
 * test once per database (H2, PostgreSQL, MariaDB) with a pool of its own, and {@link
 * dev.holdfast.testing.FaultTest} against dedicated servers that tests may restart, stall or crash.
 */
@NullMarked
package dev.holdfast.testing;

import org.jspecify.annotations.NullMarked;
