package org.wanrep.experiments;

import org.wanrep.pg.LocalPostgres;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * How much of this machine's CPU other work took while a point ran: the whole machine's busy time
 * ({@code /proc/stat}) minus our own, that is this JVM and our PostgreSQL servers with their
 * backends. A backend that exits during the point is still counted: the server's {@code cutime}
 * and {@code cstime} take over its time when it is reaped. Linux only; elsewhere it measures nothing.
 */
final class CpuMeter {
    private final Set<Long> roots;

    /** @param roots processes whose time, and whose direct children's, is ours (this JVM, the postmasters) */
    CpuMeter(Set<Long> roots) { this.roots = Set.copyOf(roots); }

    record Sample(long total, long busy, long own) {}

    /** A sample, or null when /proc cannot be read. */
    Sample sample() {
        try {
            String[] cpu = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            long total = 0;
            for (int i = 1; i <= 8 && i < cpu.length; i++) total += Long.parseLong(cpu[i]);   // user..steal (guest is inside user)
            long idle = Long.parseLong(cpu[4]) + Long.parseLong(cpu[5]);
            long own = 0;
            for (long pid : roots) {
                long[] s = ProcessCpu.stat(pid);
                if (s != null) own += s[1] + s[2] + s[3] + s[4];
            }
            try (Stream<Path> ps = Files.list(Path.of("/proc"))) {
                for (Path p : ps.toList()) {
                    String name = p.getFileName().toString();
                    if (!name.chars().allMatch(Character::isDigit)) continue;
                    long pid = Long.parseLong(name);
                    if (roots.contains(pid)) continue;
                    long[] s = ProcessCpu.stat(pid);
                    if (s != null && roots.contains(s[0])) own += s[1] + s[2];
                }
            }
            return new Sample(total, total - idle, own);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Cores other processes kept busy on average between two samples; NaN when either is missing. */
    static double foreignCores(Sample a, Sample b) {
        if (a == null || b == null || b.total <= a.total) return Double.NaN;
        double share = ((b.busy - a.busy) - (b.own - a.own)) / (double) (b.total - a.total);
        return Math.max(0, share) * Runtime.getRuntime().availableProcessors();
    }

    static CpuMeter of(List<Path> dataDirs) {
        List<Long> roots = new ArrayList<>();
        roots.add(ProcessHandle.current().pid());
        for (Path d : dataDirs) {
            long p = LocalPostgres.postmasterPid(d);
            if (p > 0) roots.add(p);
        }
        return new CpuMeter(Set.copyOf(roots));
    }
}
