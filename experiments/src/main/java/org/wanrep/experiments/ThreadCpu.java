package org.wanrep.experiments;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The CPU time and voluntary context switches of each thread of a process, from {@code /proc/PID/task} (Linux; elsewhere
 * nothing is measured), and their growth between two samples by thread group: where a JVM's time goes, and how often each
 * kind of thread blocks and is woken again (each wake-up is a thread hand-off or a blocking read). Threads that end
 * between the samples are not counted: sample while the work runs.
 */
public final class ThreadCpu {
    private ThreadCpu() {}

    /** One thread at one moment: its name as the kernel keeps it (15 characters at most), CPU time, voluntary switches. */
    public record Sample(String name, long micros, long voluntary) {}

    /** What a group of threads did between two samples. */
    public record Growth(long micros, long voluntary) {}

    /** Every thread of {@code pid} now, by thread id; empty when /proc cannot be read. */
    public static Map<Long, Sample> sample(long pid) {
        Map<Long, Sample> out = new HashMap<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path t : tasks) {
                try {
                    String stat = Files.readString(t.resolve("stat"));
                    String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    long micros = (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10_000;   // USER_HZ 100
                    long voluntary = 0;
                    for (String l : Files.readAllLines(t.resolve("status")))
                        if (l.startsWith("voluntary_ctxt_switches:")) voluntary = Long.parseLong(l.substring(l.indexOf(':') + 1).trim());
                    out.put(Long.parseLong(t.getFileName().toString()), new Sample(name, micros, voluntary));
                } catch (IOException | RuntimeException e) {
                    // the thread ended while we read it
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or the process is gone
        }
        return out;
    }

    /** A thread's group: its name with every run of digits as '#' (pool threads, sites' members and ports alike). */
    public static String group(String name) { return name.replaceAll("[0-9]+", "#"); }

    /**
     * Per group, what its threads did from {@code before} to {@code after} (a thread that is new in {@code after} counts from
     * zero), largest CPU first; groups that did nothing are left out.
     */
    public static Map<String, Growth> growth(Map<Long, Sample> before, Map<Long, Sample> after) {
        Map<String, long[]> g = new HashMap<>();
        after.forEach((tid, a) -> {
            Sample b = before.get(tid);
            boolean same = b != null && b.name().equals(a.name());   // a reused thread id is another thread
            long[] sum = g.computeIfAbsent(group(a.name()), k -> new long[2]);
            sum[0] += a.micros() - (same ? b.micros() : 0);
            sum[1] += a.voluntary() - (same ? b.voluntary() : 0);
        });
        List<Map.Entry<String, long[]>> es = new ArrayList<>(g.entrySet());
        es.removeIf(e -> e.getValue()[0] == 0 && e.getValue()[1] == 0);
        es.sort((x, y) -> x.getValue()[0] != y.getValue()[0] ? Long.compare(y.getValue()[0], x.getValue()[0])
                : Long.compare(y.getValue()[1], x.getValue()[1]));
        Map<String, Growth> out = new LinkedHashMap<>();
        for (Map.Entry<String, long[]> e : es) out.put(e.getKey(), new Growth(e.getValue()[0], e.getValue()[1]));
        return out;
    }
}
