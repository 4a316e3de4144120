package dev.holdfast.shop.job;

import dev.holdfast.shop.ShopApplication;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

import java.security.SecureRandom;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scenario 5: two shop instances (two Spring contexts on random ports, as two servers would be) on one
 * PostgreSQL database under one table prefix, both scheduling the nightly report every 100 ms with a
 * 150 ms run. The run log shows that runs never overlap, that the fencing token increases with every
 * run, and that each instance skipped while the other held the lease; the result row holds the last token.
 */
class LeasedJobTwoInstancesTest {

    record Run(String instance, long token, Timestamp started, Timestamp finished, boolean written) {}

    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void exactlyOneInstanceRunsTheJobAtATimeAndTokensIncrease(TestDatabase db) throws Exception {
        String prefix = "shop_j"
                + Long.toString(new SecureRandom().nextLong() & Long.MAX_VALUE, 36)
                        .substring(0, 6) + "_";
        ConfigurableApplicationContext a = null;
        ConfigurableApplicationContext b = null;
        try {
            a = start(db, prefix, "instance-a", "create");
            b = start(db, prefix, "instance-b", "none");
            // At least 6 s of both instances, then until 8 runs are recorded (a loaded machine runs fewer), at most 60
            // s.
            try (var watch = db.newPool(1)) {
                JdbcTemplate runsSoFar = new JdbcTemplate(watch);
                await("8 runs recorded")
                        .pollDelay(Duration.ofSeconds(6)) // the two instances run side by side this long
                        .atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(100))
                        .until(() -> runsSoFar.queryForObject("SELECT COUNT(*) FROM " + prefix + "job_run", Long.class)
                                >= 8);
            }
            NightlyReportJob jobA = a.getBean(NightlyReportJob.class);
            NightlyReportJob jobB = b.getBean(NightlyReportJob.class);
            b.close();
            a.close();
            b = null;
            a = null;

            List<Run> runs = new ArrayList<>();
            try (var pool = db.newPool(2)) {
                JdbcTemplate jdbc = new JdbcTemplate(pool);
                runs.addAll(jdbc.query(
                        "SELECT instance_id, token, started, finished, written FROM " + prefix
                                + "job_run ORDER BY started",
                        (rs, i) -> new Run(
                                rs.getString(1),
                                rs.getLong(2),
                                rs.getTimestamp(3),
                                rs.getTimestamp(4),
                                rs.getBoolean(5))));
                System.out.println(
                        "runs recorded: " + runs.size() + " skipped a/b " + jobA.skipped() + "/" + jobB.skipped());
                long resultToken = jdbc.queryForObject(
                        "SELECT fence_token FROM " + prefix + "job_result WHERE job = ?",
                        Long.class,
                        NightlyReportJob.JOB);
                assertThat(resultToken).isEqualTo(runs.get(runs.size() - 1).token());
            }
            assertThat(runs).hasSizeGreaterThanOrEqualTo(8);
            for (int i = 1; i < runs.size(); i++) {
                Run previous = runs.get(i - 1);
                Run run = runs.get(i);
                assertThat(previous.finished())
                        .as("run %s ends before run %s starts", previous, run)
                        .isBefore(run.started());
                assertThat(run.token()).as("tokens increase").isGreaterThan(previous.token());
            }
            assertThat(runs).allMatch(Run::written);
            assertThat(jobA.skipped() + jobB.skipped()).isPositive();
            System.out.printf(
                    "two instances, at least 6 s: %d runs (a %d, b %d), skips a %d, b %d, tokens %d..%d%n",
                    runs.size(),
                    runs.stream().filter(r -> r.instance().equals("instance-a")).count(),
                    runs.stream().filter(r -> r.instance().equals("instance-b")).count(),
                    jobA.skipped(),
                    jobB.skipped(),
                    runs.get(0).token(),
                    runs.get(runs.size() - 1).token());
        } finally {
            if (b != null) {
                b.close();
            }
            if (a != null) {
                a.close();
            }
            for (String t : List.of(
                    "order_line",
                    "purchase_order",
                    "invoice",
                    "job_result",
                    "job_run",
                    "locks",
                    "leases",
                    "leases_queue")) {
                db.execute("DROP TABLE IF EXISTS " + prefix + t);
            }
        }
    }

    private static ConfigurableApplicationContext start(TestDatabase db, String prefix, String instance, String ddl) {
        List<String> args = new ArrayList<>(List.of(
                "--server.port=0",
                "--spring.profiles.active=postgresql",
                "--spring.datasource.hikari.maximum-pool-size=4",
                "--spring.jpa.hibernate.ddl-auto=" + ddl,
                "--shop.table-prefix=" + prefix,
                "--shop.instance-id=" + instance,
                "--shop.job.interval=PT0.1S",
                "--shop.job.initial-delay=PT0S",
                "--shop.job.work=PT0.15S",
                "--shop.job.lease-ttl=PT5S",
                "--holdfast.offline.table=" + prefix + "locks",
                "--holdfast.lease.table=" + prefix + "leases"));
        if (System.getenv("HOLDFAST_POSTGRESQL_URL") != null) {
            args.add("--spring.datasource.url=" + db.kind().url());
            args.add("--spring.datasource.username=" + db.kind().user());
            args.add("--spring.datasource.password=" + db.kind().password());
        }
        return SpringApplication.run(ShopApplication.class, args.toArray(String[]::new));
    }

    static DataSource dataSource(ConfigurableApplicationContext c) {
        return c.getBean(DataSource.class);
    }
}
