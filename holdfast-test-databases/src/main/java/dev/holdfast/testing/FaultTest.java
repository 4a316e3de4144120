package dev.holdfast.testing;

import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a test method once per fault server: dedicated PostgreSQL and MariaDB instances that a test
 * may restart or stall ({@code scripts/fault-servers.sh up} starts them; never the shared servers).
 * The method takes a {@link FaultDatabase} parameter; display names start with the database, as in
 * {@code [postgresql] restartWhileHeld}.
 *
 * <p>Where the servers are comes from {@code HOLDFAST_FAULT_<KIND>_URL}, {@code _USER},
 * {@code _PASSWORD} (defaults: 127.0.0.1:5433 and 127.0.0.1:3307, database {@code test});
 * {@code HOLDFAST_TEST_DATABASES} selects them as for {@link DatabaseTest}. With {@code CI=true} an
 * unreachable fault server fails the test; otherwise it is skipped with a loud message. Fault tests
 * of concurrent test runs on one machine take turns (a file lock), as one restarts the servers that
 * the others use.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@TestTemplate
@ExtendWith(FaultServers.class)
public @interface FaultTest {

    /**
     * {@return the databases the test is restricted to, among PostgreSQL and MariaDB (H2, which has no
     * fault server, is ignored); empty, the default, means both}
     */
    TestDatabase.Kind[] only() default {};
}
