/**
 * What every technique needs from JDBC: validated SQL identifiers ({@link
 * dev.holdfast.jdbc.SqlIdentifier}) and Holdfast's own tables with their DDL per database ({@link
 * dev.holdfast.jdbc.HoldfastTable}, {@link dev.holdfast.jdbc.SchemaInstaller}).
 */
@NullMarked
package dev.holdfast.jdbc;

import org.jspecify.annotations.NullMarked;
