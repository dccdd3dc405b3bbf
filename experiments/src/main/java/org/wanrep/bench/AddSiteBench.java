package org.wanrep.bench;

import org.HdrHistogram.ConcurrentHistogram;
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
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A new, empty site added to a running cluster under load (issue #14): three in-process sites (symmetric
 * execution, safe delivery, one PostgreSQL each loaded with {@code pgbench -i -s SCALE}), pgbench's
 * TPC-B-like transaction from clients at sites a and b. First the closed-loop capacity is measured, then
 * the clients are paced to half of it; the addition of site d (an empty PostgreSQL) is ordered through
 * site a, d starts, takes a state transfer and catches up. Reported: capacity, offered and achieved load,
 * the transfer's time, the time until d serves, the serving sites' response times before and during the
 * addition, and the four replicas compared.
 */
public final class AddSiteBench {
    public record Result(int scale, double capacityTps, double offeredTps, double tpsBefore, double tpsDuring, double transferSeconds,
                         double servingAfterSeconds, double p50BeforeMs, double p99BeforeMs, double p50DuringMs, double p99DuringMs,
                         long errors, String replicas) {}

    private final int scale, clients, beforeSeconds, capacitySeconds;
    private final double loadFraction;
    private final PrintStream out;

    public AddSiteBench(int scale, int clients, double loadFraction, int capacitySeconds, int beforeSeconds, PrintStream out) {
        this.scale = scale;
        this.clients = clients;
        this.loadFraction = loadFraction;
        this.capacitySeconds = capacitySeconds;
        this.beforeSeconds = beforeSeconds;
        this.out = out;
    }

    public Result run() throws Exception {
        List<String> sites = new ArrayList<>(List.of("a", "b", "c"));
        List<LocalPostgres> pgs = new ArrayList<>();
        List<Site> running = new ArrayList<>();
        Path logDir = Files.createTempDirectory("wanrep-add-site-bench");
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> load = new ArrayList<>();
        try {
            Map<String, String> m = new HashMap<>();
            m.put("cluster.name", "add-site-bench-" + System.nanoTime());
            m.put("sites", String.join(",", sites));
            m.put("latency_matrix", "lan");
            m.put("delivery", "safe");
            m.put("rejoin.log_dir", logDir.toString());
            List<Integer> gcsPorts = GcsSettings.freePorts(4), proxyPorts = GcsSettings.freePorts(4);
            for (int i = 0; i < 4; i++) {
                LocalPostgres pg = LocalPostgres.startTemporary();
                pgs.add(pg);
                String s = i < 3 ? sites.get(i) : "d";
                if (i < 3) {
                    out.printf("loading %s: pgbench -i -s %d%n", s, scale);
                    RejoinBench.pgbenchInit(pg.port(), scale);
                }
                m.put("site." + s + ".postgres.port", Integer.toString(pg.port()));
                m.put("site." + s + ".postgres.socket_dir", pg.dataDir().toString());
                m.put("site." + s + ".gcs.port", Integer.toString(gcsPorts.get(i)));
                m.put("site." + s + ".proxy.port", Integer.toString(proxyPorts.get(i)));
            }
            m.put("site.d.gcs.bootstrap", "off");   // as cluster add-site configures a new site
            Config config = Config.build(m, List.of());
            running.addAll(Site.startAll(config, sites, Duration.ofSeconds(60)));

            AtomicReference<Histogram> window = new AtomicReference<>(new ConcurrentHistogram(3_600_000_000L, 3));
            AtomicLong intervalNanos = new AtomicLong(0);   // 0: closed loop
            AtomicLong errors = new AtomicLong();
            for (int site = 0; site < 2; site++)
                for (int k = 0; k < clients; k++) {
                    int port = proxyPorts.get(site);
                    Random rnd = new Random(site * 1000L + k);
                    load.add(Thread.ofPlatform().start(() -> TpcbClient.run(() -> RejoinBench.connect(port), scale, rnd, stop, intervalNanos, 100, errors,
                            us -> window.get().recordValue(us))));
                }
            Thread.sleep(3000);   // warm-up
            window.set(new ConcurrentHistogram(3_600_000_000L, 3));
            Thread.sleep(capacitySeconds * 1000L);
            double capacity = window.get().getTotalCount() / (double) capacitySeconds;
            double offered = capacity * loadFraction;
            int n = 2 * clients;
            intervalNanos.set((long) (n / offered * 1e9));
            out.printf("capacity (closed loop, %d clients at a and b): %.0f tps; now paced to %.0f tps (%.0f%%)%n", n, capacity, offered, loadFraction * 100);
            Thread.sleep(2000);
            window.set(new ConcurrentHistogram(3_600_000_000L, 3));
            long t0 = System.nanoTime();
            Thread.sleep(beforeSeconds * 1000L);
            Histogram before = window.getAndSet(new ConcurrentHistogram(3_600_000_000L, 3));
            double beforeSecs = (System.nanoTime() - t0) / 1e9;
            out.printf("before: %.0f tps, p50 %.1f ms, p99 %.1f ms%n", before.getTotalCount() / beforeSecs, ms(before, 50), ms(before, 99));

            long t1 = System.nanoTime();
            try (Connection x = RejoinBench.connect(proxyPorts.get(0)); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SHOW wanrep.sites add d")) {
                rs.next();
                out.printf("addition ordered through site a: sites %s%n", rs.getString(1));
            }
            sites.add("d");
            Map<String, String> m2 = new HashMap<>(m);
            m2.put("sites", String.join(",", sites));
            Config withD = Config.build(m2, List.of());
            Site d = Site.start(withD, "d", Duration.ofSeconds(600));
            running.add(d);
            while (!d.engine().current() && d.engine().failure() == null) Thread.sleep(20);
            if (d.engine().failure() != null) throw new IllegalStateException("site d stopped: " + d.engine().failure());
            double serving = (System.nanoTime() - t1) / 1e9;
            Histogram during = window.getAndSet(new ConcurrentHistogram(3_600_000_000L, 3));
            var tr = d.engine().lastTransfer();
            double transfer = tr == null ? -1 : tr.millis() / 1000.0;
            out.printf("site d: state transfer %.1f s; serving %.1f s after its addition was ordered; meanwhile a and b: %.0f tps, p50 %.1f ms, p99 %.1f ms%n",
                    transfer, serving, during.getTotalCount() / serving, ms(during, 50), ms(during, 99));
            stop.set(true);
            for (Thread t : load) t.join();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (System.nanoTime() < end && !(running.stream().allMatch(s -> s.engine().pending() == 0)
                    && running.stream().map(s -> s.engine().lastGsn()).distinct().count() == 1)) Thread.sleep(50);
            List<Map<String, TableDigest.Digest>> ds = new ArrayList<>();
            for (LocalPostgres pg : pgs) try (Connection x = pg.connect()) { ds.add(TableDigest.of(x)); }
            Map<String, String> verdicts = TableDigest.compare(sites, ds);
            String replicas = verdicts.values().stream().allMatch("same"::equals) ? "same" : verdicts.toString();
            return new Result(scale, capacity, offered, before.getTotalCount() / beforeSecs, during.getTotalCount() / serving, transfer, serving,
                    ms(before, 50), ms(before, 99), ms(during, 50), ms(during, 99), errors.get(), replicas);
        } finally {
            stop.set(true);
            for (Thread t : load) t.join(TimeUnit.SECONDS.toMillis(30));
            for (Site s : running) s.close();
            for (LocalPostgres pg : pgs) pg.close();
        }
    }

    private static double ms(Histogram h, double pct) { return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(pct) / 1000.0; }
}
