package dev.holdfast.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU time spent by the whole machine (client and database server share it here) and by this JVM,
 * so that a benchmark can report CPU per operation beside its rate: on a machine whose cores are all
 * busy, rate is cores divided by CPU per operation, and only less CPU per operation raises it.
 */
final class MachineCpu {

    private static final Path PROC_STAT = Path.of("/proc/stat");
    private static final long NANOS_PER_TICK = 10_000_000L; // USER_HZ is 100 on Linux

    private MachineCpu() {}

    /** Busy CPU time of all cores since boot (user, nice, system, irq, softirq, steal), or -1 off Linux. */
    static long busyNanos() {
        try {
            String[] f = Files.readAllLines(PROC_STAT).get(0).trim().split("\\s+");
            // cpu user nice system idle iowait irq softirq steal ...
            long busy = 0;
            for (int i : new int[] {1, 2, 3, 6, 7, 8}) {
                busy += Long.parseLong(f[i]);
            }
            return busy * NANOS_PER_TICK;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** The 1-minute load average, or NaN off Linux. */
    static double loadAverage() {
        try {
            return Double.parseDouble(
                    Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /** CPU time of this JVM since it started, or -1 where the platform does not tell. */
    static long processNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }
}
