package org.wanrep.experiments;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;

/**
 * CPU time of processes read from {@code /proc/PID/stat} (Linux; elsewhere nothing is measured): a process alone,
 * or a process tree, where a child that exited is still counted, since its parent's {@code cutime} and {@code cstime}
 * take over its time when it is reaped (a PostgreSQL backend, a pgpool-II child).
 */
public final class ProcessCpu {
    private ProcessCpu() {}

    /** USER_HZ on Linux: /proc counts CPU time in ticks of 10 ms. */
    private static final long MICROS_PER_TICK = 10_000;

    /** {ppid, utime, stime, cutime, cstime} of a process in ticks, or null when it is gone. */
    static long[] stat(long pid) {
        try {
            String s = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
            return new long[]{Long.parseLong(f[1]), Long.parseLong(f[11]), Long.parseLong(f[12]), Long.parseLong(f[13]), Long.parseLong(f[14])};
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** The CPU time of the process itself, all of its threads (not its children: this JVM's pgbench runs are its children). */
    public static long ownMicros(long pid) {
        long[] s = stat(pid);
        return s == null ? 0 : (s[1] + s[2]) * MICROS_PER_TICK;
    }

    /** The CPU time of each root and of everything below it, the exited children included. */
    public static long treeMicros(Collection<Long> roots) {
        long ticks = 0;
        for (long root : roots) {
            ProcessHandle h = ProcessHandle.of(root).orElse(null);
            if (h == null) continue;
            List<Long> pids = new java.util.ArrayList<>(List.of(root));
            h.descendants().forEach(d -> pids.add(d.pid()));
            for (long pid : pids) {
                long[] s = stat(pid);
                if (s != null) ticks += s[1] + s[2] + s[3] + s[4];
            }
        }
        return ticks * MICROS_PER_TICK;
    }
}
