/**
 * The Actuator endpoint {@code holdfast} ({@link dev.holdfast.spring.boot.actuate.HoldfastEndpoint}):
 * offline locks, leases, lease waiters and lock waits of now, and force-releases, for operators.
 * Configured only when Spring Boot Actuator is on the class path and the endpoint is exposed.
 */
@NullMarked
package dev.holdfast.spring.boot.actuate;

import org.jspecify.annotations.NullMarked;
