package dev.holdfast.testing;

import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a test method once per database: H2 (in-process), PostgreSQL and MariaDB servers, each with
 * a real HikariCP pool. The method takes a {@link TestDatabase} parameter. Each run's display name
 * starts with the database, as in {@code [postgresql] tryLockTwice}.
 *
 * <p>Where the servers are, and which ones run, comes from the environment (see {@link TestDatabase.Kind}
 * and the README). With {@code CI=true} an unreachable server fails the test; otherwise it is
 * skipped with a loud message on standard error.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@TestTemplate
@ExtendWith(DatabaseMatrix.class)
public @interface DatabaseTest {

    /**
     * {@return the databases the test is restricted to; empty, the default, means every database} The test
     * runs through every entry of {@code HOLDFAST_TEST_DATABASES} that reaches one of them.
     */
    TestDatabase.Kind[] only() default {};
}
