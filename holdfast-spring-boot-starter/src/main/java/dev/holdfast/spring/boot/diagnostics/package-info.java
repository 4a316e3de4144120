/**
 * Start-up failures explained the Spring Boot way ({@code FailureAnalyzer}s): what the Holdfast
 * starter needs and did not find, and what to add or set.
 */
@NullMarked
package dev.holdfast.spring.boot.diagnostics;

import org.jspecify.annotations.NullMarked;
