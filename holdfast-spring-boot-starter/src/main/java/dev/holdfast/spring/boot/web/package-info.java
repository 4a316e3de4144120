/**
 * Spring MVC helpers for Holdfast: binding a {@code LockId} from a request, 409/400 responses for lock
 * and version problems, the edit page's heartbeat, and client-carried versions.
 */
@NullMarked
package dev.holdfast.spring.boot.web;

import org.jspecify.annotations.NullMarked;
