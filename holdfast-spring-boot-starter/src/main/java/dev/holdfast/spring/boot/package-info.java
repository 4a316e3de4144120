/**
 * Spring Boot auto-configuration for Holdfast: the dialect, the lock managers and the lease service
 * from the application's {@code DataSource}, and the translation of Holdfast's exceptions into
 * Spring's {@code DataAccessException} tree ({@link
 * dev.holdfast.spring.boot.HoldfastExceptionTranslator}).
 */
@NullMarked
package dev.holdfast.spring.boot;

import org.jspecify.annotations.NullMarked;
