package dev.holdfast.shop.job;

import dev.holdfast.Holder;
import dev.holdfast.lease.FencedUpdate;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseGuard;
import dev.holdfast.lease.LeaseLostException;
import dev.holdfast.lease.LeaseNotHeldException;
import dev.holdfast.lease.LeaseTimeoutException;
import dev.holdfast.lease.Leases;
import dev.holdfast.shop.schema.ShopTableNames;
import dev.holdfast.shop.waits.TimedOutWaits;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * Scenario 5: the "nightly" order report runs on exactly one shop instance at a time, under a Holdfast
 * lease. Every instance tries on its schedule ({@link NightlyReportSchedule}, {@code shop.job.interval}) or
 * when an admin presses "Run now"; the one that gets the lease runs, keeps the lease alive while it works, and writes its
 * result through a {@link FencedUpdate} with the lease's fencing token; the others skip. A run whose
 * lease was lost meanwhile (a long GC pause, a broken lease) cannot overwrite a newer run's result:
 * the database refuses its stale token.
 */
@Component
public class NightlyReportJob {

    public static final String JOB = "nightly-order-report";
    private static final Logger log = LoggerFactory.getLogger(NightlyReportJob.class);

    /**
     * What one attempt did.
     *
     * @param heldBy      the lease's owner: this instance if it ran, else the one that holds it (null if the
     *                    lease was free again when the refusal looked, or that is unknown)
     * @param heldSince   since when {@code heldBy} has had the lease (a run: when it started; null if unknown)
     * @param leaseLostAt when the run learned that its lease was lost (nothing was written); null if not
     * @param holder      a skipped run: who held the lease (owner, since, until, token); null if it ran or unknown
     */
    public record Outcome(
            boolean ran,
            long token,
            boolean written,
            String heldBy,
            Instant heldSince,
            Instant leaseLostAt,
            String brokenBy,
            Holder holder) {

        public Outcome(
                boolean ran,
                long token,
                boolean written,
                String heldBy,
                Instant heldSince,
                Instant leaseLostAt,
                String brokenBy) {
            this(ran, token, written, heldBy, heldSince, leaseLostAt, brokenBy, null);
        }

        static Outcome skipped(Holder holder) {
            return new Outcome(
                    false,
                    0,
                    false,
                    holder == null ? null : holder.owner(),
                    holder == null ? null : holder.acquiredAt(),
                    null,
                    null,
                    holder);
        }
    }

    private final Leases leases;
    private final DataSource dataSource;
    private final JdbcTemplate jdbc;
    private final JobRunRepository runs;
    private final ShopTableNames tables;
    private final Clock clock;
    private final Duration ttl;
    private final Duration work;
    private final String instanceId;
    private final FencedUpdate fence;
    private final AtomicLong skipped = new AtomicLong();
    private final TimedOutWaits waits;

    public NightlyReportJob(
            Leases leases,
            DataSource dataSource,
            JobRunRepository runs,
            ShopTableNames tables,
            Clock clock,
            @Value("${shop.job.lease-ttl:PT30S}") Duration ttl,
            @Value("${shop.job.work:PT0S}") Duration work,
            @Value("${shop.instance-id:}") String instanceId,
            TimedOutWaits waits) {
        this.waits = waits;
        this.leases = leases;
        this.dataSource = dataSource;
        this.jdbc = new JdbcTemplate(dataSource);
        this.runs = runs;
        this.tables = tables;
        this.clock = clock;
        this.ttl = ttl;
        this.work = work;
        this.instanceId =
                instanceId.isBlank() ? "shop-" + UUID.randomUUID().toString().substring(0, 8) : instanceId;
        this.fence =
                FencedUpdate.of(tables.prefix() + "job_result", "job", "fence_token", "summary", "run_by", "finished");
    }

    /** This instance's lease owner name. */
    public String instanceId() {
        return instanceId;
    }

    /** How many attempts of this instance found the lease held elsewhere. */
    public long skipped() {
        return skipped.get();
    }

    /** One scheduled attempt: runs the job if this instance gets the lease, else skips. */
    public Outcome runOnce() {
        return runOnce(null);
    }

    /**
     * One attempt: runs the job if this instance gets the lease, else skips.
     *
     * @param requestedBy the admin who pressed "Run now" (a refusal is listed as theirs); null for the schedule
     */
    public Outcome runOnce(String requestedBy) {
        // tag::nightly-run[]
        Lease granted;
        try {
            granted = leases.acquire(JOB, instanceId, ttl, Duration.ZERO);   // one attempt, exclusive per call
        } catch (CannotAcquireLockException refused) {   // the starter's leases throw Spring's exceptions
            if (!(refused.getCause() instanceof LeaseTimeoutException held)) {
                throw refused;
            }
            skipped.incrementAndGet();
            // The admin locks page lists who waited (the admin, or this instance's schedule) and who held it.
            waits.lease(requestedBy == null ? instanceId : requestedBy, instanceId, held);
            log.info("{}: skipped{}, {}", JOB, requestedBy == null ? "" : " (Run now by " + requestedBy + ")",
                    held.getMessage());   // names the holder (owner, token, since, until)
            return Outcome.skipped(held.holder().orElse(null));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Outcome.skipped(null);
        }
        Instant started = clock.instant();
        long token = granted.token();
        try (LeaseGuard guard = leases.keepAlive(granted, ttl, lost -> log.warn("{}: lease lost", JOB, lost))) {
            String summary = report();
            pause(work); // the report's real work would take this long
            guard.checkValid();
            boolean written = write(token, summary);
            runs.save(new JobRun(JOB, instanceId, token, started, clock.instant(), written, null));
            return new Outcome(true, token, written, instanceId, started, null, null);
        } catch (LeaseLostException lost) {
            // Another instance may run the job now: this run writes nothing, and says so.
            Thread.interrupted(); // the guard interrupted this thread to stop the work; the thread goes on serving
            Instant lostAt = clock.instant();
            log.warn("{}: run with token {} stopped, its lease was lost: {}", JOB, token, lost.getMessage());
            runs.save(new JobRun(JOB, instanceId, token, started, lostAt, false, lostAt));
            String brokenBy = lost.refusal().flatMap(LeaseNotHeldException::brokenBy).orElse(null);
            return new Outcome(true, token, false, instanceId, started, lostAt, brokenBy);
        // end::nightly-run[]
        }
    }

    private String report() {
        return jdbc
                .queryForList("SELECT state, COUNT(*) AS n FROM " + tables.orders() + " GROUP BY state ORDER BY state")
                .stream()
                .map(r -> r.get("state") + ": " + r.get("n"))
                .reduce((a, b) -> a + ", " + b)
                .orElse("no orders");
    }

    private boolean write(long token, String summary) {
        try (Connection c = dataSource.getConnection()) {
            if (fence.update(
                    c,
                    token,
                    JOB,
                    summary,
                    instanceId,
                    java.time.OffsetDateTime.ofInstant(clock.instant(), java.time.ZoneOffset.UTC))) {
                return true;
            }
            // No row yet: the first run anywhere creates it (another instance may just have: retry once).
            try {
                jdbc.update("INSERT INTO " + tables.prefix() + "job_result (job) VALUES (?)", JOB);
            } catch (org.springframework.dao.DataIntegrityViolationException alreadyThere) {
                // created concurrently
            }
            return fence.update(
                    c,
                    token,
                    JOB,
                    summary,
                    instanceId,
                    java.time.OffsetDateTime.ofInstant(clock.instant(), java.time.ZoneOffset.UTC));
        } catch (SQLException e) {
            throw new IllegalStateException("writing the job result", e);
        }
    }

    private static void pause(Duration d) {
        if (d.isZero()) {
            return;
        }
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the guard interrupts on loss; checkValid reports it
        }
    }
}
