package dev.holdfast.testing;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A lock held across every JVM of the machine (test forks, modules built in parallel): an exclusive
 * lock on {@code <java.io.tmpdir>/holdfast-<name>.lock}, for tests that restart, stall or fail over
 * servers that other tests use too. {@link #close()} gives it back (so does the JVM's end).
 */
public final class MachineLock implements AutoCloseable {

    private final FileChannel channel;

    private MachineLock(FileChannel channel) {
        this.channel = channel;
    }

    /**
     * Waits until the lock {@code name} is free, then holds it. The wait has no time limit. The lock is
     * for JVMs, not for the threads of one: within one JVM, only one thread at a time may wait for or
     * hold a lock of a given name.
     *
     * @param name the lock's name, part of the lock file's name ({@code holdfast-<name>.lock}), so no path
     *             separators
     * @return the held lock; {@link #close()} gives it back
     * @throws IOException if the lock file cannot be created or opened, or the thread is interrupted while
     *                     it waits ({@link java.nio.channels.FileLockInterruptionException})
     * @throws java.nio.channels.OverlappingFileLockException if this JVM holds the lock {@code name} already,
     *                     or another of its threads waits for it
     */
    public static MachineLock take(String name) throws IOException {
        Path file = Path.of(System.getProperty("java.io.tmpdir"), "holdfast-" + name + ".lock");
        FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        try {
            channel.lock();
            return new MachineLock(channel);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** Gives the lock back: closing the channel releases its lock. */
    @Override
    public void close() throws IOException {
        channel.close();
    }
}
