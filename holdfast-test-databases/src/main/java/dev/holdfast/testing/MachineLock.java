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

    /** Waits until the lock {@code name} is free, then holds it. */
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
