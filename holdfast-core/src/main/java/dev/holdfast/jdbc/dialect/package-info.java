/**
 * The supported databases (H2, PostgreSQL, MariaDB): detection, the database clock, and the
 * classification of SQL errors by SQLState and vendor code into the few kinds Holdfast acts on ({@link
 * dev.holdfast.jdbc.dialect.SqlErrorKind}).
 */
@NullMarked
package dev.holdfast.jdbc.dialect;

import org.jspecify.annotations.NullMarked;
