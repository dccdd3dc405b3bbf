package org.wanrep.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.HdrHistogram.Histogram;
import org.wanrep.config.Config;
import org.wanrep.emulator.synthetic.SyntheticWorkload;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.jgroups.GcsSettings;
import org.wanrep.gcs.wan.DeliveryBound;
import org.wanrep.gcs.wan.LatencyMatrix;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.site.Site;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Update response time on an emulated WAN at low load, symmetric execution: one site per matrix
 * site in this JVM (each with its own PostgreSQL), the synthetic 10-update transaction submitted
 * open-loop at a fixed total rate, round-robin over the sites. Per site, the p50 response time is
 * set beside its limit 1.2 x (the origin's analytical final-delivery bound + direct execution p50)
 * + 10 ms, where direct execution is measured on the same machine in the same run.
 */
public final class WanResponseBench {
    public record SiteResult(String delivery, String site, long txns, double p50Ms, double p99Ms, double boundMs, double execP50Ms,
                             double limitMs) {
        boolean pass() { return p50Ms <= limitMs; }
    }

    /** The study's 10-update transaction; the bench submits updates only. */
    private static final SyntheticWorkload SYNTHETIC = new SyntheticWorkload();

    private final String matrixName;
    private final double rate;
    private final int txns, warmup;
    private final PrintStream out;

    public WanResponseBench(String matrixName, double rate, int txns, int warmup, PrintStream out) {
        this.matrixName = matrixName;
        this.rate = rate;
        this.txns = txns;
        this.warmup = warmup;
        this.out = out;
    }

    public List<SiteResult> run(List<String> deliveries) throws Exception {
        LatencyMatrix matrix = LatencyMatrix.load(matrixName);
        List<String> sites = matrix.sites();
        List<SiteResult> all = new ArrayList<>();
        List<LocalPostgres> pgs = new ArrayList<>();
        try {
            for (int i = 0; i < sites.size(); i++) pgs.add(LocalPostgres.startTemporary());
            double execP50 = directExecutionP50(pgs.get(0));
            out.printf("direct execution of the 10-update transaction at one replica: p50 %.2f ms%n", execP50);
            for (String d : deliveries) all.addAll(runMode(d, matrix, pgs, execP50));
        } finally {
            for (LocalPostgres p : pgs) p.close();
        }
        return all;
    }

    private double directExecutionP50(LocalPostgres pg) throws Exception {
        try (Connection c = pg.connect()) {
            SYNTHETIC.load(c, null);
            Histogram h = new Histogram(3);
            Random r = new Random(1);
            try (Statement st = c.createStatement()) {
                c.setAutoCommit(true);
                for (int i = 0; i < 300; i++) {
                    long t0 = System.nanoTime();
                    st.execute(SYNTHETIC.updateSql(r));
                    if (i >= 50) h.recordValue((System.nanoTime() - t0) / 1000);
                }
            }
            SYNTHETIC.drop(c);
            return h.getValueAtPercentile(50) / 1000.0;
        }
    }

    private List<SiteResult> runMode(String delivery, LatencyMatrix matrix, List<LocalPostgres> pgs, double execP50) throws Exception {
        List<String> sites = matrix.sites();
        Map<String, String> conf = OpenLoopUpdates.clusterConfig("wanbench", sites, matrixName, pgs);
        conf.put("delivery", delivery);
        Config config = Config.build(conf, List.of());
        out.printf("%s: starting %d sites on %s...%n", delivery, sites.size(), matrixName);
        List<Site> running = Site.startAll(config, sites, Duration.ofSeconds(90));
        try {
            try (Connection c = OpenLoopUpdates.connect(running.get(0))) {
                SYNTHETIC.load(c, null);   // through the proxy: replicated DDL and load
            }
            OpenLoopUpdates.awaitQuiet(running);
            List<Histogram> hs = List.of(OpenLoopUpdates.run(running, rate, warmup + txns, warmup, (k, site, r) -> SYNTHETIC.updateSql(r), delivery, out));
            DeliveryBound bound = new DeliveryBound(matrix, config.get("sequencer") == null ? sites.get(0) : config.get("sequencer").split(",")[0].trim());
            Delivery d = Site.delivery(config);
            List<SiteResult> rs = new ArrayList<>();
            for (int i = 0; i < sites.size(); i++) {
                Histogram h = hs.get(i);
                double b = bound.fin(d, i, i);
                rs.add(new SiteResult(delivery, sites.get(i), h.getTotalCount(), h.getValueAtPercentile(50) / 1000.0,
                        h.getValueAtPercentile(99) / 1000.0, b, execP50, 1.2 * (b + execP50) + 10));
            }
            return rs;
        } finally {
            for (Site s : running) s.close();
        }
    }

    public static String table(List<SiteResult> rs) {
        StringBuilder b = new StringBuilder(String.format("%-9s %-14s %6s %9s %9s %10s %9s %10s %s%n",
                "delivery", "site", "txns", "p50 ms", "p99 ms", "bound ms", "exec ms", "limit ms", "verdict"));
        for (SiteResult r : rs)
            b.append(String.format("%-9s %-14s %6d %9.1f %9.1f %10.1f %9.2f %10.1f %s%n", r.delivery(), r.site(), r.txns(), r.p50Ms(), r.p99Ms(),
                    r.boundMs(), r.execP50Ms(), r.limitMs(), r.pass() ? "PASS" : "FAIL"));
        return b.toString();
    }

    public static String json(List<SiteResult> rs, String matrix, double rate) throws Exception {
        List<Map<String, Object>> list = new ArrayList<>();
        for (SiteResult r : rs) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("delivery", r.delivery());
            m.put("site", r.site());
            m.put("txns", r.txns());
            m.put("p50_ms", round(r.p50Ms()));
            m.put("p99_ms", round(r.p99Ms()));
            m.put("bound_origin_ms", round(r.boundMs()));
            m.put("exec_p50_ms", round(r.execP50Ms()));
            m.put("limit_ms", round(r.limitMs()));
            m.put("pass", r.pass());
            list.add(m);
        }
        Map<String, Object> top = new LinkedHashMap<>();
        top.put("benchmark", "wan-response");
        top.put("latency_matrix", matrix);
        top.put("rate_tps", rate);
        top.put("results", list);
        return new ObjectMapper().writeValueAsString(top);
    }

    private static double round(double v) { return Math.round(v * 100) / 100.0; }
}
