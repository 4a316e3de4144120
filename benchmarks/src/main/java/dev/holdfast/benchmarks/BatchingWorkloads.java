package dev.holdfast.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.testing.TestDatabase;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;

/**
 * Lease batching across workloads, shaped like a user's program: every implementation has its own
 * HikariCP pool and its own {@link LeaseService} (or ShedLock provider); each of {@code threads}
 * threads (named {@code wl-<implementation>-<n>}) takes its own name, holds it for the cell's hold
 * (0: back to back) and releases it, again and again. A cell is a database, a thread count and a
 * hold; in each cell the implementations run in blocks of {@code --block-millis}, one block each per
 * round, the order rotated every round, one warm-up round and {@code --rounds} measured ones. A cell
 * reports each implementation's median pairs/s and the medians of its per-round ratios to the
 * unbatched service, ShedLock, the two-commit limit and the one-statement design, with round trips
 * per pair and calls per multi-row statement, and the load average before and after.
 *
 * <p>The Holdfast implementations are {@code --variants} ({@link BuilderVariants}), looked up by name
 * so the harness runs whatever batching API the build has; one whose service reports the same batching
 * as an earlier one is left out (on a build whose default is unbatched, {@code default} is
 * {@code unbatched}), unless its label ends in {@code Again}: such a twin of an earlier variant (for
 * example {@code unbatchedAgain=batching:OFF}) measures the noise of a cell, its ratio to the
 * unbatched service being that of two runs of the same code. The peers ({@code --peers}): {@code shedLock}
 * (its JdbcTemplate provider, database time), {@code oneStatement} (the design by hand, {@link LeaseInterleaved#designAcquire}), {@code limit}
 * (one single-row auto-commit update to take, one to give back).
 *
 * <p>{@code --chaos-seconds n} (0: none) then runs {@link LeaseChaos} for every variant on every database.
 * Writes {@code <out>.json} (after every cell) and {@code <out>.md} (markdown tables). Usage: {@code java -cp
 * benchmarks.jar dev.holdfast.benchmarks.BatchingWorkloads [--quick] [--databases postgresql,mariadb]
 * [--threads 1,2,8,16] [--holds 0,0.1,1,10] [--rounds 15] [--block-millis 1000] [--variants …] [--peers …]
 * [--chaos-seconds 30] [--no-matrix] --out <prefix>}; {@code --quick} is the smoke run (threads 1,8, holds 0,1,
 * 3 rounds of 300 ms, chaos 5 s), any option after it overriding it.
 */
public final class BatchingWorkloads {

    static final Duration TTL = Duration.ofSeconds(60);
    static final String TABLE = "holdfast_bench_wl_lease";
    static final String DESIGN_TABLE = "holdfast_bench_wl_design";
    static final String LIMIT_TABLE = "holdfast_bench_wl_limit";
    static final String SHEDLOCK_TABLE = "holdfast_bench_wl_shedlock";
    static final List<String> PEERS = List.of("shedLock", "oneStatement", "limit");
    /** The yardsticks of the ratios, by implementation label. */
    static final List<String> YARDSTICKS = List.of("unbatched", "shedLock", "limit", "oneStatement");

    /** The command line. */
    static final class Options {
        List<String> databases = List.of("postgresql", "mariadb");
        List<Integer> threads = List.of(1, 2, 8, 16);
        List<Double> holdsMillis = List.of(0.0, 0.1, 1.0, 10.0);
        int rounds = 15;
        long blockMillis = 1000;
        String variants = BuilderVariants.DEFAULTS;
        List<String> peers = PEERS;
        int chaosSeconds = 30;
        boolean matrix = true;
        Path out = Path.of("batching-workloads");

        static Options parse(String[] args) {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "--quick" -> {
                        o.threads = List.of(1, 8);
                        o.holdsMillis = List.of(0.0, 1.0);
                        o.rounds = 3;
                        o.blockMillis = 300;
                        o.chaosSeconds = 5;
                    }
                    case "--no-matrix" -> o.matrix = false;
                    case "--databases" -> o.databases = List.of(args[++i].split(","));
                    case "--threads" ->
                        o.threads = List.of(args[++i].split(",")).stream()
                                .map(Integer::valueOf)
                                .toList();
                    case "--holds" ->
                        o.holdsMillis = List.of(args[++i].split(",")).stream()
                                .map(Double::valueOf)
                                .toList();
                    case "--rounds" -> o.rounds = Integer.parseInt(args[++i]);
                    case "--block-millis" -> o.blockMillis = Long.parseLong(args[++i]);
                    case "--variants" -> o.variants = args[++i];
                    case "--peers" -> {
                        String peers = args[++i];
                        o.peers = peers.isBlank() ? List.of() : List.of(peers.split(","));
                    }
                    case "--chaos-seconds" -> o.chaosSeconds = Integer.parseInt(args[++i]);
                    case "--out" -> o.out = Path.of(args[++i]);
                    default -> throw new IllegalArgumentException("Unknown option " + a + "; see the class's javadoc");
                }
            }
            if (!PEERS.containsAll(o.peers)) {
                throw new IllegalArgumentException("Peers are a subset of " + PEERS + ", not " + o.peers);
            }
            return o;
        }
    }

    /** One implementation of a cell. */
    private record Impl(
            String label,
            String what,
            LeaseInterleaved.Pair pair,
            LeaseHandoff.Counting counting,
            LeaseService service,
            HikariDataSource pool) {}

    /** One implementation's figures in a cell. */
    record Result(
            String label,
            String what,
            List<Double> rates,
            Map<String, Double> ratios,
            double roundTripsPerPair,
            double callsPerStatement) {}

    /**
     * A cell's figures: {@code load} is the 1-minute load average before and after, {@code busy} the share
     * of the machine's CPU time that was busy (all processes) while the cell ran.
     */
    record Cell(String database, int threads, double holdMillis, List<Result> results, double[] load, double busy) {}

    public static void main(String[] args) throws Exception {
        Options o = Options.parse(args);
        List<BuilderVariants.Variant> variants =
                distinct(BuilderVariants.resolve(o.variants), LeasePeers.kind(o.databases.get(0)));
        List<Cell> cells = new ArrayList<>();
        List<LeaseChaos.Result> chaos = new ArrayList<>();
        Report report = new Report(o, cells, chaos);
        int index = 0;
        if (o.matrix) {
            for (String database : o.databases) {
                TestDatabase.Kind kind = LeasePeers.kind(database);
                installTables(
                        kind,
                        o.threads.stream().mapToInt(Integer::intValue).max().orElse(1));
                for (int threads : o.threads) {
                    for (double hold : o.holdsMillis) {
                        Cell cell = cell(kind, threads, hold, variants, o, index++);
                        cells.add(cell);
                        report.write();
                        report.printCell(cell);
                    }
                }
            }
        }
        if (o.chaosSeconds > 0) {
            for (String database : o.databases) {
                TestDatabase.Kind kind = LeasePeers.kind(database);
                int first = index++;
                for (int k = 0; k < variants.size(); k++) {
                    BuilderVariants.Variant v = variants.get((k + first) % variants.size());
                    LeaseChaos.Result r = LeaseChaos.run(kind, v, Duration.ofSeconds(o.chaosSeconds));
                    chaos.add(r);
                    System.out.println(r.line());
                    report.write();
                }
            }
        }
        report.write();
        System.out.print(report.markdown());
    }

    /**
     * The variants whose services report different batchings (the first of equal ones kept): on a build
     * whose default is unbatched, {@code default} is {@code unbatched} and needs no blocks of its own.
     */
    private static List<BuilderVariants.Variant> distinct(
            List<BuilderVariants.Variant> variants, TestDatabase.Kind kind) {
        List<BuilderVariants.Variant> distinct = new ArrayList<>();
        Map<String, String> seen = new LinkedHashMap<>();
        try (HikariDataSource pool = kind.newPool("wl-variants", 2)) {
            for (BuilderVariants.Variant v : variants) {
                LeaseService service = v.configure()
                        .apply(LeaseService.builder(pool).table(TABLE))
                        .build();
                String batching = BuilderVariants.batchingOf(service);
                service.close();
                if (seen.containsKey(batching)
                        && !batching.equals("?")
                        && !v.label().endsWith("Again")) {
                    System.out.printf(
                            "variant %s = %s: batching %s, as %s; left out%n",
                            v.label(), v.resolved(), batching, seen.get(batching));
                } else {
                    seen.put(batching, v.label());
                    distinct.add(v);
                    System.out.printf("variant %s = %s: batching %s%n", v.label(), v.resolved(), batching);
                }
            }
        }
        return distinct;
    }

    private static void installTables(TestDatabase.Kind kind, int maxThreads) throws SQLException {
        try (HikariDataSource admin = kind.newPool("wl-admin", 1)) {
            LeasePeers.execute(admin, "DROP TABLE IF EXISTS " + TABLE, "DROP TABLE IF EXISTS " + TABLE + "_queue");
            new SchemaInstaller(admin).install(HoldfastTable.LEASES, TABLE);
            LeaseInterleaved.createDesignTable(admin, kind, DESIGN_TABLE);
            LeasePeers.createLimitTable(admin, maxThreads * 2, LIMIT_TABLE);
        }
    }

    /** Runs one cell: its own pools and services, closed at its end. */
    private static Cell cell(
            TestDatabase.Kind kind,
            int threads,
            double holdMillis,
            List<BuilderVariants.Variant> variants,
            Options o,
            int index)
            throws Exception {
        long holdNanos = Math.round(holdMillis * 1e6);
        List<HikariDataSource> pools = new ArrayList<>();
        List<Impl> impls = new ArrayList<>();
        double loadBefore = MachineCpu.loadAverage();
        long busyBefore = MachineCpu.busyNanos();
        long start = System.nanoTime();
        try {
            for (BuilderVariants.Variant v : variants) {
                HikariDataSource pool = kind.newPool("wl-" + v.label(), threads + 2);
                pools.add(pool);
                LeaseHandoff.Counting counting = new LeaseHandoff.Counting();
                LeaseService service = v.configure()
                        .apply(LeaseService.builder(counting.wrap(pool)).table(TABLE))
                        .build();
                String batching = BuilderVariants.batchingOf(service);
                String label = v.label();
                impls.add(new Impl(
                        label,
                        v.resolved() + " → " + batching,
                        (t, i) -> {
                            Lease lease = service.tryAcquire(label + "-" + t, "wl-" + label + "-" + t, TTL)
                                    .orElseThrow();
                            hold(holdNanos);
                            service.release(lease);
                        },
                        counting,
                        service,
                        pool));
            }
            for (String peer : o.peers) {
                HikariDataSource pool = kind.newPool("wl-" + peer, threads);
                pools.add(pool);
                LeaseHandoff.Counting counting = new LeaseHandoff.Counting();
                DataSource ds = counting.wrap(pool);
                impls.add(new Impl(peer, peer, peer(peer, kind, ds, holdNanos), counting, null, pool));
            }
            List<Result> results = measure(impls, threads, o, index);
            double busy = (MachineCpu.busyNanos() - busyBefore)
                    / ((double) (System.nanoTime() - start)
                            * Runtime.getRuntime().availableProcessors());
            return new Cell(
                    kind.id(),
                    threads,
                    holdMillis,
                    results,
                    new double[] {loadBefore, MachineCpu.loadAverage()},
                    busyBefore < 0 ? Double.NaN : busy);
        } finally {
            impls.stream()
                    .filter(i -> i.service() != null)
                    .forEach(i -> i.service().close());
            pools.forEach(HikariDataSource::close);
        }
    }

    private static LeaseInterleaved.Pair peer(String peer, TestDatabase.Kind kind, DataSource ds, long holdNanos)
            throws SQLException {
        return switch (peer) {
            case "shedLock" -> {
                JdbcTemplateLockProvider shedLock = LeasePeers.shedLock(ds, kind, SHEDLOCK_TABLE);
                yield (t, i) -> {
                    SimpleLock lock = shedLock.lock(
                                    new LockConfiguration(Instant.now(), "shedLock-" + t, TTL, Duration.ZERO))
                            .orElseThrow();
                    hold(holdNanos);
                    lock.unlock();
                };
            }
            case "oneStatement" ->
                (t, i) -> {
                    String name = "oneStatement-" + t;
                    String owner = "wl-" + name;
                    long token;
                    try (Connection c = ds.getConnection()) {
                        token = LeaseInterleaved.designAcquire(c, kind, DESIGN_TABLE, name, owner);
                    }
                    hold(holdNanos);
                    try (Connection c = ds.getConnection()) {
                        LeaseInterleaved.designRelease(c, kind, DESIGN_TABLE, name, owner, token);
                    }
                };
            case "limit" ->
                (t, i) -> {
                    limitCommit(ds, t * 2);
                    hold(holdNanos);
                    limitCommit(ds, t * 2 + 1);
                };
            default -> throw new IllegalArgumentException(peer);
        };
    }

    private static void limitCommit(DataSource ds, int id) throws SQLException {
        try (Connection c = ds.getConnection();
                PreparedStatement ps = c.prepareStatement(LeaseInterleaved.limitUpdate(LIMIT_TABLE))) {
            ps.setInt(1, id);
            ps.executeUpdate();
        }
    }

    /** Holds for {@code nanos} as a caller's work would (parked, not spinning); 0 returns at once. */
    static void hold(long nanos) {
        long end = System.nanoTime() + nanos;
        for (long left = nanos; left > 0; left = end - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }

    private static List<Result> measure(List<Impl> impls, int threads, Options o, int index) throws Exception {
        int n = impls.size();
        Map<String, List<Double>> rates = new LinkedHashMap<>();
        Map<String, long[]> counts = new LinkedHashMap<>(); // executes, pairs, batched calls, multi-row statements
        impls.forEach(i -> {
            rates.put(i.label(), new ArrayList<>());
            counts.put(i.label(), new long[4]);
        });
        for (int round = -1; round < o.rounds; round++) {
            for (int k = 0; k < n; k++) {
                Impl impl = impls.get((k + round + 1 + index) % n);
                long executes = impl.counting().statements.get();
                long batched = impl.service() == null ? 0 : BuilderVariants.probe(impl.service(), "batchedCalls");
                long multiRow =
                        impl.service() == null ? 0 : BuilderVariants.probe(impl.service(), "multiRowStatements");
                open(impl.pool(), threads);
                double[] block =
                        LeaseInterleaved.block(impl.pair(), threads, o.blockMillis, "wl-" + impl.label() + "-");
                impl.pool().getHikariPoolMXBean().softEvictConnections();
                if (round < 0) {
                    continue;
                }
                rates.get(impl.label()).add(block[0]);
                long[] c = counts.get(impl.label());
                c[0] += impl.counting().statements.get() - executes;
                c[1] += (long) block[1];
                if (impl.service() != null && batched >= 0 && multiRow >= 0) {
                    c[2] += BuilderVariants.probe(impl.service(), "batchedCalls") - batched;
                    c[3] += BuilderVariants.probe(impl.service(), "multiRowStatements") - multiRow;
                }
            }
        }
        List<Result> results = new ArrayList<>();
        for (Impl impl : impls) {
            List<Double> mine = rates.get(impl.label());
            Map<String, Double> ratios = new LinkedHashMap<>();
            for (String yardstick : YARDSTICKS) {
                List<Double> theirs = rates.get(yardstick);
                if (theirs != null && !yardstick.equals(impl.label())) {
                    List<Double> perRound = new ArrayList<>();
                    for (int r = 0; r < mine.size(); r++) {
                        perRound.add(mine.get(r) / theirs.get(r));
                    }
                    ratios.put(yardstick, Interleaved.median(perRound));
                }
            }
            long[] c = counts.get(impl.label());
            results.add(new Result(
                    impl.label(),
                    impl.what(),
                    mine,
                    ratios,
                    c[0] / (double) Math.max(1, c[1]),
                    c[3] > 0 ? c[2] / (double) c[3] : Double.NaN));
        }
        return results;
    }

    /**
     * Opens {@code n} connections of {@code pool} before its block, untimed; after the block they are
     * evicted, so that only one implementation's connections are open at a time (16 threads of six
     * pools would take all of PostgreSQL's default 100, which this machine's other users share).
     */
    private static void open(HikariDataSource pool, int n) throws SQLException {
        List<Connection> open = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                open.add(pool.getConnection());
            }
        } finally {
            for (Connection c : open) {
                c.close();
            }
        }
    }

    /** JSON and markdown of what has been measured so far. */
    private record Report(Options o, List<Cell> cells, List<LeaseChaos.Result> chaos) {

        void write() throws Exception {
            Path json = Path.of(o.out + ".json");
            if (json.toAbsolutePath().getParent() != null) {
                Files.createDirectories(json.toAbsolutePath().getParent());
            }
            Files.writeString(json, json());
            Files.writeString(Path.of(o.out + ".md"), markdown());
        }

        String json() {
            StringBuilder s = new StringBuilder(String.format(
                    Locale.ROOT,
                    "{\n  \"rounds\": %d, \"blockMillis\": %d," + " \"variants\": \"%s\", \"cells\": [\n",
                    o.rounds,
                    o.blockMillis,
                    o.variants));
            for (int c = 0; c < cells.size(); c++) {
                Cell cell = cells.get(c);
                s.append(String.format(
                        Locale.ROOT,
                        "    {\"database\": \"%s\", \"threads\": %d, \"holdMillis\": %s,"
                                + " \"loadBefore\": %s, \"loadAfter\": %s, \"cpuBusy\": %s, \"results\": [\n",
                        cell.database(),
                        cell.threads(),
                        cell.holdMillis(),
                        num(cell.load()[0]),
                        num(cell.load()[1]),
                        num(cell.busy())));
                for (int r = 0; r < cell.results().size(); r++) {
                    Result x = cell.results().get(r);
                    StringBuilder ratios = new StringBuilder();
                    x.ratios()
                            .forEach((k, v) -> ratios.append(String.format(Locale.ROOT, ", \"vs_%s\": %s", k, num(v))));
                    s.append(String.format(
                            Locale.ROOT,
                            "      {\"implementation\": \"%s\", \"configuration\": \"%s\","
                                    + " \"medianPairsPerSecond\": %s%s, \"roundTripsPerPair\": %s, \"callsPerStatement\": %s,"
                                    + " \"rates\": %s}%s\n",
                            x.label(),
                            x.what().replace("\"", "'"),
                            num(Interleaved.median(x.rates())),
                            ratios,
                            num(x.roundTripsPerPair()),
                            num(x.callsPerStatement()),
                            x.rates().stream().map(BatchingWorkloads::num).toList(),
                            r + 1 < cell.results().size() ? "," : ""));
                }
                s.append("    ]}").append(c + 1 < cells.size() ? ",\n" : "\n");
            }
            s.append("  ],\n  \"chaos\": [\n");
            for (int c = 0; c < chaos.size(); c++) {
                s.append("    ").append(chaos.get(c).json()).append(c + 1 < chaos.size() ? ",\n" : "\n");
            }
            return s.append("  ]\n}\n").toString();
        }

        void printCell(Cell cell) {
            for (Result x : cell.results()) {
                StringBuilder ratios = new StringBuilder();
                x.ratios().forEach((k, v) -> ratios.append(String.format(Locale.ROOT, " × %s %.2f", k, v)));
                System.out.printf(
                        Locale.ROOT,
                        "%s %2d threads hold %4s ms %-13s %8.0f pairs/s%s; %.2f round trips per"
                                + " pair, %.2f calls per statement (load %.2f → %.2f, CPU %.0f %% busy)%n",
                        cell.database(),
                        cell.threads(),
                        fmt(cell.holdMillis()),
                        x.label(),
                        Interleaved.median(x.rates()),
                        ratios,
                        x.roundTripsPerPair(),
                        x.callsPerStatement(),
                        cell.load()[0],
                        cell.load()[1],
                        cell.busy() * 100);
            }
        }

        String markdown() {
            StringBuilder s = new StringBuilder();
            String database = null;
            for (Cell cell : cells) {
                if (!cell.database().equals(database)) {
                    database = cell.database();
                    s.append(String.format(
                            Locale.ROOT,
                            "%n%s, %d rounds of %d ms blocks, medians (ratios: medians of"
                                    + " per-round ratios)%n%n| threads | hold ms | implementation | pairs/s | × unbatched |"
                                    + " × ShedLock | × limit | × one-statement | round trips / pair | calls / statement | load, CPU busy |%n"
                                    + "|---|---|---|---|---|---|---|---|---|---|---|%n",
                            database,
                            o.rounds,
                            o.blockMillis));
                }
                for (Result x : cell.results()) {
                    s.append(String.format(
                            Locale.ROOT,
                            "| %d | %s | %s | %.0f | %s | %s | %s | %s | %.2f | %s | %.1f → %.1f, %.0f %% |%n",
                            cell.threads(),
                            fmt(cell.holdMillis()),
                            x.label(),
                            Interleaved.median(x.rates()),
                            ratio(x, "unbatched"),
                            ratio(x, "shedLock"),
                            ratio(x, "limit"),
                            ratio(x, "oneStatement"),
                            x.roundTripsPerPair(),
                            Double.isNaN(x.callsPerStatement())
                                    ? "–"
                                    : String.format(Locale.ROOT, "%.2f", x.callsPerStatement()),
                            cell.load()[0],
                            cell.load()[1],
                            cell.busy() * 100));
                }
            }
            if (!chaos.isEmpty()) {
                s.append(String.format("%n%s%n", LeaseChaos.Result.MARKDOWN_HEADER));
                chaos.forEach(c -> s.append(c.markdownRow()).append('\n'));
            }
            return s.toString();
        }

        private static String ratio(Result x, String yardstick) {
            Double r = x.ratios().get(yardstick);
            return r == null ? "–" : String.format(Locale.ROOT, "%.2f", r);
        }
    }

    static String fmt(double millis) {
        return millis == Math.rint(millis) ? String.valueOf((long) millis) : String.valueOf(millis);
    }

    private static String num(double v) {
        return Interleaved.jsonNumber(v);
    }
}
