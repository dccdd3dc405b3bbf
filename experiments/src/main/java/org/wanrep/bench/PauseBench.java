package org.wanrep.bench;

import org.wanrep.cluster.ClusterLayout;
import org.wanrep.cluster.LocalCluster;
import org.wanrep.config.Config;
import org.wanrep.history.Faults;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A site paused or cut off under load (issue #12's last target, issue #14's pause and partition): a local cluster
 * of three real processes ({@code cluster up}, symmetric execution, the given delivery), pgbench's TPC-B-like
 * transaction as one request from closed-loop clients at sites a and b; site c's middleware is stopped with
 * SIGSTOP for a while, then continued (or c is cut off from a and b inside every JGroups stack, then healed). Measured: the longest time the serving sites acknowledged no update (the target: no 5 s window
 * without one), when the others excluded c, and how long c took from SIGCONT until its replica had every
 * transaction a had ordered by then and it answered again (the target: 60 s), or whether it stopped; replicas
 * compared at the end.
 */
public final class PauseBench {
    /** Acknowledged updates per bucket of this many milliseconds. */
    static final int BUCKET_MS = 100;

    public record Result(String delivery, String fault, int pauseSeconds, double tpsBefore, double tpsDuringPause, double tpsAfter,
                         long longestGapMs, double gapStartS, double excludedAfterS, double caughtUpAfterS, boolean cStopped,
                         long errors, String replicas, double stopAtS, double contAtS, double endS, Map<String, long[]> acksPerBucket) {
        /** Whether the run meets the targets. */
        public boolean meetsTargets() {
            return longestGapMs < 5000 && (cStopped || caughtUpAfterS >= 0 && caughtUpAfterS <= 60) && replicas.equals("same");
        }
    }

    private final String delivery, fault;
    private final int scale, clients, beforeSeconds, pauseSeconds, catchUpLimitSeconds;
    private final PrintStream out;

    /** {@code fault}: "pause" (SIGSTOP of c's middleware) or "partition" (c cut off inside every JGroups stack, both ways). */
    public PauseBench(String delivery, String fault, int scale, int clients, int beforeSeconds, int pauseSeconds, int catchUpLimitSeconds, PrintStream out) {
        if (!fault.equals("pause") && !fault.equals("partition")) throw new IllegalArgumentException("fault must be pause or partition, not " + fault);
        this.delivery = delivery;
        this.fault = fault;
        this.scale = scale;
        this.clients = clients;
        this.beforeSeconds = beforeSeconds;
        this.pauseSeconds = pauseSeconds;
        this.catchUpLimitSeconds = catchUpLimitSeconds;
        this.out = out;
    }

    public Result run() throws Exception {
        // readable by the postgres user, which initdb runs as when this runs as root
        Path dir = Files.createTempDirectory("wanrep-pause-bench", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        PrintStream quiet = new PrintStream(OutputStream.nullOutputStream());
        out.printf("[%s] starting 3 sites (real processes, lan, symmetric, %s delivery)...%n", delivery, delivery);
        ClusterLayout layout = LocalCluster.up(dir, 3, "lan", Config.build(Map.of("delivery", delivery, "execution", "symmetric",
                "testing.fault_injection", fault.equals("partition") ? "on" : "off"), List.of()), quiet);
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> load = new ArrayList<>();
        long cPid = layout.sites().get(2).middleware_pid();
        boolean cStoppedBySignal = false;
        try {
            ClusterLayout.SiteEntry a = layout.sites().get(0), c = layout.sites().get(2);
            out.printf("[%s] loading pgbench -i -s %d through site a...%n", delivery, scale);
            pgbenchInit(a.proxy_port());
            int seconds = beforeSeconds + pauseSeconds + catchUpLimitSeconds + 10;
            Map<String, AtomicLongArray> acks = new ConcurrentHashMap<>();
            java.util.concurrent.atomic.AtomicLong errors = new java.util.concurrent.atomic.AtomicLong();
            long t0 = System.nanoTime();
            for (int site = 0; site < 2; site++) {
                ClusterLayout.SiteEntry e = layout.sites().get(site);
                AtomicLongArray buckets = acks.computeIfAbsent(e.name(), k -> new AtomicLongArray(seconds * 1000 / BUCKET_MS + 1));
                for (int k = 0; k < clients; k++) {
                    Random rnd = new Random(site * 1000L + k);
                    load.add(Thread.ofPlatform().name("pause-bench-" + e.name() + "-" + k).start(() -> TpcbClient.run(() -> connect(e, "proxy"), scale, rnd, stop,
                            new java.util.concurrent.atomic.AtomicLong(), 50, errors, us -> {   // errors: e.g. 53400 while flow control waits, or the view change
                        int i = (int) ((System.nanoTime() - t0) / 1_000_000 / BUCKET_MS);
                        if (i < buckets.length()) buckets.incrementAndGet(i);
                    })));
                }
            }
            Thread.sleep(beforeSeconds * 1000L);

            double stopAt = (System.nanoTime() - t0) / 1e9;
            if (fault.equals("pause")) {
                out.printf("[%s] t=%.1fs SIGSTOP site c (middleware pid %d) for %d s%n", delivery, stopAt, cPid, pauseSeconds);
                Faults.kill(cPid, "STOP");
            } else {
                out.printf("[%s] t=%.1fs site c cut off from a and b (inside the JGroups stacks, both ways) for %d s%n", delivery, stopAt, pauseSeconds);
                if (!Faults.partition(layout, c, true)) throw new IllegalStateException("could not cut site c off (a proxy did not answer)");
            }
            cStoppedBySignal = true;
            double excludedAt = -1;
            long pauseEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(pauseSeconds);
            while (System.nanoTime() < pauseEnd) {
                if (excludedAt < 0) {
                    List<String> s = sites(a);
                    if (s != null && !s.get(3).isEmpty() && !List.of(s.get(3).split(",")).stream().anyMatch(m -> m.startsWith("c/")))
                        excludedAt = (System.nanoTime() - t0) / 1e9;
                }
                Thread.sleep(200);
            }
            List<String> atResume = sites(a);
            long resumeGsn = atResume == null ? Long.MAX_VALUE : Long.parseLong(atResume.get(1));
            if (fault.equals("pause")) Faults.kill(cPid, "CONT");
            else if (!Faults.partition(layout, c, false)) throw new IllegalStateException("could not heal the partition (a proxy did not answer)");
            cStoppedBySignal = false;
            double contAt = (System.nanoTime() - t0) / 1e9;
            out.printf("[%s] t=%.1fs %s; site a had ordered through GSN %d%s%n", delivery, contAt, fault.equals("pause") ? "SIGCONT site c" : "partition healed", resumeGsn,
                    excludedAt < 0 ? "; c was not excluded" : String.format("; c was excluded %.1f s after its pause began", excludedAt - stopAt));

            double caughtUpAt = -1;
            boolean cGone = false;
            long limit = System.nanoTime() + TimeUnit.SECONDS.toNanos(catchUpLimitSeconds);
            while (System.nanoTime() < limit) {
                if (!ProcessHandle.of(cPid).map(ProcessHandle::isAlive).orElse(false)) {
                    cGone = true;
                    break;
                }
                if (doneBelow(c) >= resumeGsn && answers(c)) {
                    caughtUpAt = (System.nanoTime() - t0) / 1e9;
                    break;
                }
                Thread.sleep(200);
            }
            if (caughtUpAt >= 0) out.printf("[%s] t=%.1fs site c has every transaction ordered before it resumed and answers: caught up in %.1f s%n",
                    delivery, caughtUpAt, caughtUpAt - contAt);
            else if (cGone) out.printf("[%s] site c stopped after it resumed (see its log)%n", delivery);
            else out.printf("[%s] site c had not caught up %d s after it resumed%n", delivery, catchUpLimitSeconds);
            Thread.sleep(3000);   // some of the load after it
            double end = (System.nanoTime() - t0) / 1e9;
            stop.set(true);
            for (Thread t : load) t.join(TimeUnit.SECONDS.toMillis(60));

            // per-bucket totals of the two serving sites
            int last = (int) (end * 1000 / BUCKET_MS);
            Map<String, long[]> perSite = new java.util.TreeMap<>();
            acks.forEach((s, arr) -> {
                long[] v = new long[last];
                for (int i = 0; i < last && i < arr.length(); i++) v[i] = arr.get(i);
                perSite.put(s, v);
            });
            long[] both = new long[last];
            for (long[] v : perSite.values()) for (int i = 0; i < last; i++) both[i] += v[i];
            int from = (int) (2000 / BUCKET_MS);   // after the clients' first connections
            int gap = 0, longest = 0, longestStart = 0;
            for (int i = from; i < last; i++) {
                if (both[i] == 0) {
                    gap++;
                    if (gap > longest) {
                        longest = gap;
                        longestStart = i - gap + 1;
                    }
                } else gap = 0;
            }
            double before = rate(both, from, (int) (stopAt * 1000 / BUCKET_MS));
            double during = rate(both, (int) (stopAt * 1000 / BUCKET_MS), (int) (contAt * 1000 / BUCKET_MS));
            double after = rate(both, (int) (contAt * 1000 / BUCKET_MS), last);
            out.printf("[%s] comparing replicas...%n", delivery);
            Map<String, String> verdicts = LocalCluster.check(dir, "postgres", quiet);
            String replicas = verdicts.values().stream().allMatch("same"::equals) ? "same" : verdicts.toString();
            return new Result(delivery, fault, pauseSeconds, before, during, after, (long) longest * BUCKET_MS, longestStart * BUCKET_MS / 1000.0,
                    excludedAt < 0 ? -1 : excludedAt - stopAt, caughtUpAt < 0 ? -1 : caughtUpAt - contAt, cGone, errors.get(), replicas,
                    stopAt, contAt, end, perSite);
        } finally {
            stop.set(true);
            if (cStoppedBySignal && fault.equals("pause")) Faults.kill(cPid, "CONT");
            if (cStoppedBySignal && fault.equals("partition")) Faults.partition(layout, layout.sites().get(2), false);
            for (Thread t : load) t.join(TimeUnit.SECONDS.toMillis(30));
            LocalCluster.down(dir, quiet);
            if (System.getenv("WANREP_BENCH_KEEP") != null) out.printf("[%s] cluster directory kept (WANREP_BENCH_KEEP): %s%n", delivery, dir);
            else deleteTree(dir);
        }
    }

    private static double rate(long[] buckets, int from, int to) {
        long n = 0;
        for (int i = Math.max(0, from); i < Math.min(to, buckets.length); i++) n += buckets[i];
        return to <= from ? 0 : n * 1000.0 / ((to - from) * BUCKET_MS);
    }

    /** Site, state, last GSN, pending, members of a site's {@code SHOW wanrep.sites} (its own row), or null. */
    private static List<String> sites(ClusterLayout.SiteEntry e) {
        try (Connection x = connect(e, "proxy"); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SHOW wanrep.sites")) {
            if (!rs.next()) return null;
            return List.of(rs.getString("site"), rs.getString("last_gsn"), rs.getString("pending"), rs.getString("members"));
        } catch (SQLException ex) {
            return null;
        }
    }

    /** Every GSN below this is committed in the site's replica (its own record), read from the replica directly. */
    private static long doneBelow(ClusterLayout.SiteEntry e) {
        try (Connection x = connect(e, "postgres"); Statement st = x.createStatement();
             ResultSet rs = st.executeQuery("SELECT coalesce(max(done_below), 0) FROM wanrep.position")) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException ex) {
            return -1;
        }
    }

    /** Whether the site's proxy answers a query (a site that is not current refuses). */
    private static boolean answers(ClusterLayout.SiteEntry e) {
        try (Connection x = connect(e, "proxy"); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM pgbench_branches")) {
            return rs.next();
        } catch (SQLException ex) {
            return false;
        }
    }

    private static Connection connect(ClusterLayout.SiteEntry e, String to) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", "postgres");
        p.setProperty("sslmode", "disable");
        p.setProperty("preferQueryMode", "simple");
        p.setProperty("connectTimeout", "5");
        p.setProperty("socketTimeout", "30");
        String host = to.equals("proxy") ? e.proxy_host() : e.pg_host();
        int port = to.equals("proxy") ? e.proxy_port() : e.pg_port();
        return DriverManager.getConnection("jdbc:postgresql://" + host + ":" + port + "/postgres", p);
    }

    private void pgbenchInit(int port) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(ProxyOverheadBench.pgbenchBinary(), "-h", "127.0.0.1", "-p", Integer.toString(port), "-U", "postgres",
                "-i", "-s", Integer.toString(scale), "-q", "postgres").redirectErrorStream(true);
        pb.environment().put("PGSSLMODE", "disable");
        Process p = pb.start();
        String output = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(1800, TimeUnit.SECONDS) || p.exitValue() != 0) throw new IllegalStateException("pgbench -i failed:\n" + output);
    }

    private static void deleteTree(Path dir) {
        try (var s = Files.walk(dir)) {
            s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temporary directory
        }
    }
}
