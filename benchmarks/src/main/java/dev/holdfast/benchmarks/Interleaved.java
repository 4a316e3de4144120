package dev.holdfast.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A measurement that is robust to load drifting on a shared machine, as a cross-check of the JMH
 * runs: the implementations run in short alternating blocks (rotating which goes first), so each
 * sees the same load. The result is the median of the per-block rates and the ratio of medians to
 * a baseline, written as JSON.
 */
public final class Interleaved {

    /** One operation; {@code i} counts operations so that callers can vary names. */
    public interface Operation {
        void run(int i) throws Exception;
    }

    private final Map<String, Operation> operations = new LinkedHashMap<>();

    public Interleaved add(String benchmark, Operation operation) {
        operations.put(benchmark, operation);
        return this;
    }

    /**
     * Runs two warm-up rounds and {@code rounds} measured rounds of {@code block} operations per
     * implementation, prints the medians and writes them to {@code out}.
     */
    public void run(String database, String baseline, int rounds, int block, Path out) throws Exception {
        Map<String, List<Double>> rates = new LinkedHashMap<>();
        operations.keySet().forEach(k -> rates.put(k, new ArrayList<>()));
        List<String> names = new ArrayList<>(operations.keySet());
        int counter = 0;
        for (int round = -2; round < rounds; round++) {
            for (int k = 0; k < names.size(); k++) {
                String name = names.get((k + Math.max(round, 0)) % names.size());
                Operation operation = operations.get(name);
                long start = System.nanoTime();
                for (int i = 0; i < block; i++) {
                    operation.run(counter++);
                }
                double perSecond = block / ((System.nanoTime() - start) / 1e9);
                if (round >= 0) {
                    rates.get(name).add(perSecond);
                }
            }
        }
        write(database, baseline, rounds, block, rates, out);
    }

    private static void write(
            String database, String baseline, int rounds, int block, Map<String, List<Double>> rates, Path out)
            throws IOException {
        double base = median(rates.get(baseline));
        StringBuilder json = new StringBuilder(
                "{\n  \"database\": \"" + database + "\", \"rounds\": " + rounds + ", \"opsPerBlock\": " + block
                        + ", \"threads\": 1, \"baseline\": \"" + baseline + "\",\n  \"results\": [\n");
        List<String> names = new ArrayList<>(rates.keySet());
        for (int k = 0; k < names.size(); k++) {
            String name = names.get(k);
            double median = median(rates.get(name));
            System.out.printf(
                    "%s %-34s median %.0f ops/s, ratio to %s %.3f%n", database, name, median, baseline, median / base);
            json.append("    {\"benchmark\": \"")
                    .append(name)
                    .append("\", \"medianOpsPerSecond\": ")
                    .append(String.format(Locale.ROOT, "%.1f", median))
                    .append(", \"ratioToBaseline\": ")
                    .append(String.format(Locale.ROOT, "%.3f", median / base))
                    .append(", \"blocks\": ")
                    .append(rates.get(name).stream()
                            .map(r -> String.format(Locale.ROOT, "%.1f", r))
                            .toList())
                    .append(k + 1 < names.size() ? "},\n" : "}\n");
        }
        json.append("  ]\n}\n");
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, json);
    }

    /** {@code v} with three decimals, or {@code null} where JSON has no number for it. */
    static String jsonNumber(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? "null" : String.format(Locale.ROOT, "%.3f", v);
    }

    static double median(List<Double> values) {
        double[] sorted =
                values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return sorted.length % 2 == 1
                ? sorted[sorted.length / 2]
                : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
    }
}
