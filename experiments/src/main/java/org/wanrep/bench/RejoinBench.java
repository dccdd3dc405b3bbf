package org.wanrep.bench;

import org.HdrHistogram.Histogram;
import org.wanrep.config.Config;
import org.wanrep.gcs.jgroups.GcsSettings;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.pg.TableDigest;
import org.wanrep.site.Site;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Catch-up rate: three in-process sites (symmetric execution, safe delivery, one PostgreSQL each, loaded
 * with {@code pgbench -i -s SCALE} directly before the sites start), pgbench's TPC-B-like transaction from
 * closed-loop clients at sites a and b. Site c crashes, a and b order {@code missed} more transactions
 * without it, then c starts again and catches up from their logs while the load goes on. Reported: the
 * catch-up (transactions, seconds, transactions per second applied), and the serving sites' response
 * times (p50, p99) before the crash and during the catch-up; replicas are compared at the end.
 */
public final class RejoinBench {
    public record Result(int scale, long missed, double transferSeconds, long caughtUp, double catchUpSeconds, double catchUpTps, double p50BeforeMs, double p99BeforeMs,
                         double p50DuringMs, double p99DuringMs, long txnsBefore, long txnsDuring, String replicas) {}


    private final int scale, clients, beforeSeconds, logWindow;
    private final long missed;
    private final PrintStream out;

    /** {@code logWindow} below {@code missed}: the site cannot catch up from the logs and transfers state first. */
    public RejoinBench(int scale, int clients, long missed, int beforeSeconds, int logWindow, PrintStream out) {
        this.logWindow = logWindow;
        this.scale = scale;
        this.clients = clients;
        this.missed = missed;
        this.beforeSeconds = beforeSeconds;
        this.out = out;
    }

    public Result run() throws Exception {
        List<String> sites = List.of("a", "b", "c");
        List<LocalPostgres> pgs = new ArrayList<>();
        List<Site> running = new ArrayList<>();
        Path logDir = Files.createTempDirectory("wanrep-rejoin-bench");
        try {
            Map<String, String> m = new HashMap<>();
            m.put("cluster.name", "rejoin-bench-" + System.nanoTime());
            m.put("sites", String.join(",", sites));
            m.put("latency_matrix", "lan");
            m.put("delivery", "safe");
            m.put("rejoin.log_dir", logDir.toString());
            m.put("rejoin.log_window", Integer.toString(logWindow));
            // the replay is what it measures: never a state transfer chosen because it would be faster
            if (logWindow >= missed) m.put("rejoin.replay_per_second", "0");
            List<Integer> gcsPorts = GcsSettings.freePorts(3), proxyPorts = GcsSettings.freePorts(3);
            for (int i = 0; i < 3; i++) {
                LocalPostgres pg = LocalPostgres.startTemporary();
                pgs.add(pg);
                out.printf("loading %s: pgbench -i -s %d%n", sites.get(i), scale);
                pgbenchInit(pg.port());
                String s = sites.get(i);
                m.put("site." + s + ".postgres.port", Integer.toString(pg.port()));
                m.put("site." + s + ".postgres.socket_dir", pg.dataDir().toString());
                m.put("site." + s + ".gcs.port", Integer.toString(gcsPorts.get(i)));
                m.put("site." + s + ".proxy.port", Integer.toString(proxyPorts.get(i)));
            }
            Config config = Config.build(m, List.of());
            running.addAll(Site.startAll(config, sites, Duration.ofSeconds(60)));
            Site a = running.get(0);

            AtomicReference<Histogram> window = new AtomicReference<>(new org.HdrHistogram.ConcurrentHistogram(3_600_000_000L, 3));
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> load = new ArrayList<>();
            for (int site = 0; site < 2; site++)
                for (int k = 0; k < clients; k++) {
                    int port = proxyPorts.get(site);
                    Random rnd = new Random(site * 1000L + k);
                    load.add(Thread.ofPlatform().start(() -> client(port, rnd, stop, window)));
                }
            Thread.sleep(2000);   // warm-up
            window.set(new org.HdrHistogram.ConcurrentHistogram(3_600_000_000L, 3));
            Thread.sleep(beforeSeconds * 1000L);
            Histogram before = window.getAndSet(new org.HdrHistogram.ConcurrentHistogram(3_600_000_000L, 3));
            out.printf("before: %d transactions at a and b, p50 %.1f ms, p99 %.1f ms%n", before.getTotalCount(), ms(before, 50), ms(before, 99));

            Site c = running.remove(2);
            c.crash();
            long from = a.engine().lastGsn();
            out.printf("site c crashed at GSN %d; a and b go on without it%n", from);
            while (a.engine().lastGsn() < from + missed) Thread.sleep(50);

            window.set(new org.HdrHistogram.ConcurrentHistogram(3_600_000_000L, 3));
            long t0 = System.nanoTime();
            Site c2 = Site.start(config, "c", Duration.ofSeconds(600));
            running.add(c2);
            while (!c2.engine().current() && c2.engine().failure() == null) Thread.sleep(20);
            double seconds = (System.nanoTime() - t0) / 1e9;
            Histogram during = window.getAndSet(new org.HdrHistogram.ConcurrentHistogram(3_600_000_000L, 3));
            if (c2.engine().failure() != null) throw new IllegalStateException("site c stopped: " + c2.engine().failure());
            var cu = c2.engine().lastCatchUp();
            long caught = cu == null ? 0 : cu.gsns();
            var tr = c2.engine().lastTransfer();
            double transfer = tr == null ? 0 : tr.millis() / 1000.0;
            if (tr != null) out.printf("site c: state transfer at GSN %d took %.1f s%n", tr.gsns(), transfer);
            double rate = cu == null || cu.millis() == 0 ? 0 : cu.gsns() * 1000.0 / cu.millis();
            out.printf("site c caught up %d transactions in %.1f s (replay %.1f s, %.0f per second); during it a and b: %d transactions, p50 %.1f ms, p99 %.1f ms%n",
                    caught, seconds, cu == null ? 0 : cu.millis() / 1000.0, rate, during.getTotalCount(), ms(during, 50), ms(during, 99));
            stop.set(true);
            for (Thread t : load) t.join();
            // quiescent: every site delivered the same and finished it
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (System.nanoTime() < end && !(running.stream().allMatch(s -> s.engine().pending() == 0)
                    && running.stream().map(s -> s.engine().lastGsn()).distinct().count() == 1)) Thread.sleep(50);
            List<Map<String, TableDigest.Digest>> ds = new ArrayList<>();
            for (LocalPostgres pg : pgs) try (Connection x = pg.connect()) { ds.add(TableDigest.of(x)); }
            Map<String, String> verdicts = TableDigest.compare(sites, ds);
            String replicas = verdicts.values().stream().allMatch("same"::equals) ? "same" : verdicts.toString();
            return new Result(scale, missed, transfer, caught, seconds, rate, ms(before, 50), ms(before, 99), ms(during, 50), ms(during, 99),
                    before.getTotalCount(), during.getTotalCount(), replicas);
        } finally {
            for (Site s : running) s.close();
            for (LocalPostgres pg : pgs) pg.close();
        }
    }

    private void client(int port, Random rnd, AtomicBoolean stop, AtomicReference<Histogram> window) {
        TpcbClient.run(() -> connect(port), scale, rnd, stop, new java.util.concurrent.atomic.AtomicLong(), 100,
                new java.util.concurrent.atomic.AtomicLong(), us -> window.get().recordValue(us));
    }

    /** A client's connection to a site's proxy (the in-process sites take no TLS). */
    static Connection connect(int port) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", "postgres");
        p.setProperty("preferQueryMode", "simple");
        return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/postgres", p);
    }

    private static double ms(Histogram h, double pct) { return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(pct) / 1000.0; }

    private void pgbenchInit(int port) throws Exception { pgbenchInit(port, scale); }

    /** {@code pgbench -i -s scale} straight into a PostgreSQL (before any site starts on it). */
    static void pgbenchInit(int port, int scale) throws Exception {
        Process p = new ProcessBuilder(ProxyOverheadBench.pgbenchBinary(), "-h", "127.0.0.1", "-p", Integer.toString(port), "-U", "postgres",
                "-i", "-s", Integer.toString(scale), "-q", "postgres").redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(1800, TimeUnit.SECONDS) || p.exitValue() != 0) throw new IllegalStateException("pgbench -i failed:\n" + output);
    }
}
