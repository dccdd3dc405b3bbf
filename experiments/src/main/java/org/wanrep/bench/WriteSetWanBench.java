package org.wanrep.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.HdrHistogram.Histogram;
import org.wanrep.config.Config;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.jgroups.GcsSettings;
import org.wanrep.gcs.wan.DeliveryBound;
import org.wanrep.gcs.wan.LatencyMatrix;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.site.Site;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * Write-set execution on an emulated WAN at low load, against symmetric execution measured in the
 * same run. Every site owns {@value #TABLES_PER_SITE} tables (it is their primary); the study's
 * 10-update transaction is drawn over the tables of one site:
 * <ul>
 *   <li>{@code symmetric}: a site's own tables (the baseline per site);</li>
 *   <li>{@code primary-copy LW}: a site's own tables, so it is their primary: one message in the response time;</li>
 *   <li>{@code primary-copy RW}: the next site's tables: executed there, the write set comes back;</li>
 *   <li>{@code local-copy}: a site's own tables, so transactions of different sites never conflict.</li>
 * </ul>
 * Limits per site: LW and local-copy within 1.2 x that site's symmetric p50 + 10 ms; RW at most
 * 1.2 x (final delivery at the primary + one-way delay primary -> origin + direct execution p50) + 10 ms.
 */
public final class WriteSetWanBench {
    static final int TABLES_PER_SITE = 3, ROWS = 10_000;

    public record Result(String config, String site, long txns, double p50Ms, double p99Ms, double limitMs, String limitRule) {
        public boolean pass() { return p50Ms <= limitMs; }
    }

    private final String matrixName;
    private final String delivery;
    private final double rate;
    private final int txns, warmup;
    private final PrintStream out;

    public WriteSetWanBench(String matrixName, String delivery, double rate, int txns, int warmup, PrintStream out) {
        this.matrixName = matrixName;
        this.delivery = delivery;
        this.rate = rate;
        this.txns = txns;
        this.warmup = warmup;
        this.out = out;
    }

    static String table(int owner, int k) { return "ws_" + owner + "_" + k; }

    /** 10 updates of random rows over the tables owned by site {@code owner}, as one request. */
    static String updateSql(int owner, Random r) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 10; i++) {
            if (i > 0) b.append("; ");
            b.append("UPDATE ").append(table(owner, r.nextInt(TABLES_PER_SITE))).append(" SET v = v + 1 WHERE id = ").append(1 + r.nextInt(ROWS));
        }
        return b.toString();
    }

    public List<Result> run() throws Exception {
        LatencyMatrix matrix = LatencyMatrix.load(matrixName);
        List<String> sites = matrix.sites();
        int n = sites.size();
        List<LocalPostgres> pgs = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) pgs.add(LocalPostgres.startTemporary());
            double exec = directExecutionP50(pgs.get(0), n);
            out.printf("direct execution of the 10-update transaction at one replica: p50 %.2f ms%n", exec);
            Map<String, double[]> p50 = new LinkedHashMap<>();
            List<Result> all = new ArrayList<>();
            record Config(String name, String execution, int ownerShift) {}
            for (Config cf : List.of(new Config("symmetric", "symmetric", 0), new Config("primary-copy LW", "primary-copy", 0),
                    new Config("primary-copy RW", "primary-copy", 1), new Config("local-copy", "local-copy", 0))) {
                Histogram[] hs = runConfig(cf.name(), cf.execution(), cf.ownerShift(), matrix, pgs);
                double[] ps = new double[n];
                for (int i = 0; i < n; i++) ps[i] = hs[i].getValueAtPercentile(50) / 1000.0;
                p50.put(cf.name(), ps);
                DeliveryBound bound = new DeliveryBound(matrix, sites.get(0));
                Delivery d = Site.delivery(org.wanrep.config.Config.build(Map.of("delivery", delivery), List.of()));
                for (int i = 0; i < n; i++) {
                    double limit;
                    String rule;
                    switch (cf.name()) {
                        case "symmetric" -> { limit = Double.NaN; rule = "baseline"; }
                        case "primary-copy RW" -> {
                            int primary = (i + 1) % n;
                            double fin = bound.fin(d, i, primary), back = matrix.delay(primary, i);
                            limit = 1.2 * (fin + back + exec) + 10;
                            rule = String.format("1.2 x (fin@%s %.0f + d(%s,%s) %.0f + exec %.1f) + 10", sites.get(primary), fin, sites.get(primary), sites.get(i), back, exec);
                        }
                        default -> {
                            limit = 1.2 * p50.get("symmetric")[i] + 10;
                            rule = String.format("1.2 x symmetric %.1f + 10", p50.get("symmetric")[i]);
                        }
                    }
                    all.add(new Result(cf.name(), sites.get(i), hs[i].getTotalCount(), ps[i], hs[i].getValueAtPercentile(99) / 1000.0, limit, rule));
                }
            }
            return all;
        } finally {
            for (LocalPostgres p : pgs) p.close();
        }
    }

    private double directExecutionP50(LocalPostgres pg, int sites) throws Exception {
        try (Connection c = pg.connect(); Statement st = c.createStatement()) {
            load(st, sites);
            Histogram h = new Histogram(3);
            Random r = new Random(1);
            for (int i = 0; i < 300; i++) {
                long t0 = System.nanoTime();
                st.execute(updateSql(r.nextInt(sites), r));
                if (i >= 50) h.recordValue((System.nanoTime() - t0) / 1000);
            }
            return h.getValueAtPercentile(50) / 1000.0;
        }
    }

    private static void load(Statement st, int sites) throws Exception {
        for (int s = 0; s < sites; s++)
            for (int k = 0; k < TABLES_PER_SITE; k++) {
                st.execute("DROP TABLE IF EXISTS " + table(s, k));   // the replicas serve every configuration in turn
                st.execute("CREATE TABLE " + table(s, k) + "(id int PRIMARY KEY, v bigint NOT NULL, pad text NOT NULL)");
                st.execute("INSERT INTO " + table(s, k) + " SELECT g, 0, repeat('x', 80) FROM generate_series(1, " + ROWS + ") g");
            }
    }

    private Histogram[] runConfig(String name, String execution, int ownerShift, LatencyMatrix matrix, List<LocalPostgres> pgs) throws Exception {
        List<String> sites = matrix.sites();
        int n = sites.size();
        Map<String, String> conf = OpenLoopUpdates.clusterConfig("wsbench", sites, matrixName, pgs);
        conf.put("delivery", delivery);
        conf.put("execution", execution);
        for (int s = 0; s < n; s++)
            for (int k = 0; k < TABLES_PER_SITE; k++) conf.put("tables." + table(s, k) + ".primary", sites.get(s));
        Config config = Config.build(conf, List.of());
        out.printf("%s (%s delivery): starting %d sites on %s...%n", name, delivery, n, matrixName);
        List<Site> running = Site.startAll(config, sites, java.time.Duration.ofSeconds(90));
        try {
            try (Connection c = OpenLoopUpdates.connect(running.get(0)); Statement st = c.createStatement()) {
                load(st, n);   // through the proxy: replicated
            }
            OpenLoopUpdates.awaitQuiet(running);
            return OpenLoopUpdates.run(running, rate, warmup + txns, warmup, (k, site, r) -> updateSql((site + ownerShift) % n, r), name, out);
        } finally {
            for (Site s : running) s.close();
        }
    }

    public static String table(List<Result> rs) {
        StringBuilder b = new StringBuilder(String.format("%-16s %-10s %5s %8s %8s %8s  %-7s %s%n", "configuration", "site", "txns", "p50 ms", "p99 ms",
                "limit", "verdict", "limit rule"));
        for (Result r : rs)
            b.append(String.format("%-16s %-10s %5d %8.1f %8.1f %8s  %-7s %s%n", r.config(), r.site(), r.txns(), r.p50Ms(), r.p99Ms(),
                    Double.isNaN(r.limitMs()) ? "-" : String.format("%.1f", r.limitMs()), Double.isNaN(r.limitMs()) ? "" : r.pass() ? "PASS" : "FAIL",
                    r.limitRule()));
        return b.toString();
    }

    public static String json(List<Result> rs, String matrix, String delivery, double rate) throws Exception {
        List<Map<String, Object>> list = new ArrayList<>();
        for (Result r : rs) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("configuration", r.config());
            m.put("site", r.site());
            m.put("txns", r.txns());
            m.put("p50_ms", Math.round(r.p50Ms() * 100) / 100.0);
            m.put("p99_ms", Math.round(r.p99Ms() * 100) / 100.0);
            if (!Double.isNaN(r.limitMs())) {
                m.put("limit_ms", Math.round(r.limitMs() * 100) / 100.0);
                m.put("pass", r.pass());
            }
            m.put("limit_rule", r.limitRule());
            list.add(m);
        }
        Map<String, Object> top = new LinkedHashMap<>();
        top.put("benchmark", "writeset-wan-response");
        top.put("latency_matrix", matrix);
        top.put("delivery", delivery);
        top.put("rate_tps", rate);
        top.put("results", list);
        return new ObjectMapper().writeValueAsString(top);
    }
}
