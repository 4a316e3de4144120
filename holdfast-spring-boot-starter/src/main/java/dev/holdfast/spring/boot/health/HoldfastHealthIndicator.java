package dev.holdfast.spring.boot.health;

import dev.holdfast.DatabaseException;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaCheck;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.LeaseHealth;
import dev.holdfast.lease.LeaseService;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The {@code holdfast} health indicator. DOWN only when Holdfast cannot work: its database cannot be
 * reached, or its tables are missing or outdated ({@link SchemaCheck}). Otherwise UP, with details:
 * {@code schema}, {@code database} (the dialect), and for the lease service {@code wakeUps} (how its
 * waiting calls learn of a release: on PostgreSQL notified through {@code LISTEN} or polling, and why;
 * on MariaDB watching a wake-up connection or polling; on H2 in-process), {@code leasesLost} (kept-alive
 * leases lost since the start), {@code lastLoss} and {@code lastLossAt}. A lost lease does not make
 * Holdfast DOWN: it is something that happened, not something Holdfast cannot do.
 */
public class HoldfastHealthIndicator extends AbstractHealthIndicator {

    private final SchemaCheck schema;
    private final Dialect dialect;
    private final Map<HoldfastTable, String> tables;
    private final @Nullable LeaseService leases;

    /**
     * @param dataSource the pool (a connection of its own per check)
     * @param dialect    the database's dialect
     * @param tables     the configured name of each table to check
     * @param leases     the lease service whose wake-ups and losses to report, or null for none
     */
    public HoldfastHealthIndicator(
            DataSource dataSource, Dialect dialect, Map<HoldfastTable, String> tables, @Nullable LeaseService leases) {
        super("Holdfast health check failed");
        this.schema = new SchemaCheck(dataSource, dialect);
        this.dialect = dialect;
        this.tables = Map.copyOf(tables);
        this.leases = leases;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.withDetail("database", dialect.id());
        List<SchemaCheck.Problem> problems;
        try {
            problems = schema.check(tables);
        } catch (DatabaseException unreachable) {
            builder.down().withDetail("error", "the database cannot be reached: " + unreachable.getMessage());
            return;
        }
        if (!problems.isEmpty()) {
            builder.down()
                    .withDetail(
                            "schema",
                            problems.stream().map(SchemaCheck.Problem::describe).toList());
            return;
        }
        builder.up().withDetail("schema", "present and current");
        if (leases != null) {
            LeaseHealth lease = LeaseHealth.of(leases);
            builder.withDetail("wakeUps", wakeUps(lease)).withDetail("leasesLost", lease.leasesLost());
            if (lease.lastLoss() != null) {
                builder.withDetail("lastLoss", lease.lastLoss())
                        .withDetail("lastLossAt", String.valueOf(lease.lastLossAt()));
            }
        }
    }

    private String wakeUps(LeaseHealth lease) {
        return switch (dialect) {
            case POSTGRESQL ->
                lease.listening()
                        ? "notified (LISTEN)"
                        : lease.listenerBehindPooler()
                                ? "polling: a pooler keeps notifications from the listener (PgBouncer in transaction mode)"
                                : "polling: the listener starts with the first waiting acquire, or is reconnecting (see the"
                                        + " dev.holdfast.lease log)";
            case MARIADB ->
                lease.wakeUpWatching()
                        ? "watching (a wake-up connection)"
                        : "polling: the wake-up connection opens with a waiting acquire when the pool has a spare"
                                + " connection (see the dev.holdfast.lease log)";
            default -> "in-process";
        };
    }
}
