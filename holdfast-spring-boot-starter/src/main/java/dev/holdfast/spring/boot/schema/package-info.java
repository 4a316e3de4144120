/**
 * The start-up check of Holdfast's tables ({@link dev.holdfast.spring.boot.schema.HoldfastSchemaVerifier}):
 * missing or outdated tables stop the start with a report that says how to create them, instead of
 * the first lock or lease failing far from the cause.
 */
@NullMarked
package dev.holdfast.spring.boot.schema;

import org.jspecify.annotations.NullMarked;
