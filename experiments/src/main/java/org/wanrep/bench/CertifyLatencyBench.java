package org.wanrep.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.HdrHistogram.Histogram;
import org.wanrep.config.Config;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.wan.DeliveryBound;
import org.wanrep.gcs.wan.LatencyMatrix;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.site.Site;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * What an interactive transaction's COMMIT costs under certification (issue #13): one site per matrix site in
 * this JVM (real PostgreSQL each, safe delivery by default, {@code blocks=certify}), one pgjdbc client per site with
 * autocommit off running BEGIN; SELECT a row by key; UPDATE it; COMMIT, closed loop with a pause between blocks (low
 * load), each client on its own rows so that certification aborts nothing. Per site the COMMIT's p50 is set beside
 * its limit 1.2 x the origin's analytical final-delivery bound + 10 ms: a commit should cost one total-order round,
 * over its local execution (the statements before COMMIT, reported apart). The sites' certification counters say
 * which path the blocks took.
 */
public final class CertifyLatencyBench {
    public record SiteResult(String site, long blocks, double execP50Ms, double commitP50Ms, double commitP99Ms, double boundMs,
                             double limitMs, long certified, long aborted, long failed, long committedInAll) {
        public boolean pass() { return commitP50Ms <= limitMs && failed == 0; }
    }

    private final String matrixName;
    private final String delivery;
    private final int blocks, warmup;
    private final long pauseMs;
    private final PrintStream out;

    public CertifyLatencyBench(String matrixName, String delivery, int blocks, int warmup, long pauseMs, PrintStream out) {
        this.matrixName = matrixName;
        this.delivery = delivery;
        this.blocks = blocks;
        this.warmup = warmup;
        this.pauseMs = pauseMs;
        this.out = out;
    }

    public List<SiteResult> run() throws Exception {
        LatencyMatrix matrix = LatencyMatrix.load(matrixName);
        List<String> sites = matrix.sites();
        List<LocalPostgres> pgs = new ArrayList<>();
        try {
            for (int i = 0; i < sites.size(); i++) pgs.add(LocalPostgres.startTemporary());
            Map<String, String> conf = OpenLoopUpdates.clusterConfig("certifybench", sites, matrixName, pgs);
            conf.put("delivery", delivery);
            conf.put("blocks", "certify");
            Config config = Config.build(conf, List.of());
            out.printf("starting %d sites on %s (%s delivery, blocks=certify)...%n", sites.size(), matrixName, delivery);
            List<Site> running = Site.startAll(config, sites, Duration.ofSeconds(90));
            try {
                try (Connection c = OpenLoopUpdates.connect(running.get(0)); Statement st = c.createStatement()) {
                    st.execute("CREATE TABLE cert_acc (id int PRIMARY KEY, bal bigint NOT NULL)");
                    st.execute("INSERT INTO cert_acc SELECT g, 0 FROM generate_series(1, " + (sites.size() * 1000) + ") g");
                }
                OpenLoopUpdates.awaitQuiet(running);
                long[] certifiedBefore = new long[sites.size()], abortedBefore = new long[sites.size()];
                for (int i = 0; i < sites.size(); i++) {
                    long[] c = certification(running.get(i));
                    certifiedBefore[i] = c[0];
                    abortedBefore[i] = c[1];
                }
                ExecutorService pool = Executors.newFixedThreadPool(sites.size());
                List<Future<Histogram[]>> fs = new ArrayList<>();
                long[] failed = new long[sites.size()];
                java.util.concurrent.atomic.AtomicLong committed = new java.util.concurrent.atomic.AtomicLong();
                for (int i = 0; i < sites.size(); i++) {
                    int site = i;
                    fs.add(pool.submit(() -> client(running.get(site), site, failed, committed)));
                }
                List<Histogram[]> hs = new ArrayList<>();
                for (Future<Histogram[]> f : fs) hs.add(f.get());
                pool.shutdown();
                DeliveryBound bound = new DeliveryBound(matrix, config.get("sequencer") == null ? sites.get(0) : config.get("sequencer").split(",")[0].trim());
                Delivery d = Site.delivery(config);
                List<SiteResult> rs = new ArrayList<>();
                for (int i = 0; i < sites.size(); i++) {
                    long[] c = certification(running.get(i));
                    Histogram exec = hs.get(i)[0], commit = hs.get(i)[1];
                    double b = bound.fin(d, i, i);
                    rs.add(new SiteResult(sites.get(i), commit.getTotalCount(), exec.getValueAtPercentile(50) / 1000.0,
                            commit.getValueAtPercentile(50) / 1000.0, commit.getValueAtPercentile(99) / 1000.0, b, 1.2 * b + 10,
                            c[0] - certifiedBefore[i], c[1] - abortedBefore[i], failed[i], committed.get()));
                }
                return rs;
            } finally {
                for (Site s : running) s.close();
            }
        } finally {
            for (LocalPostgres p : pgs) p.close();
        }
    }

    /** One client at a site: its blocks' local execution and COMMIT times (microseconds), after the warm-up. */
    private Histogram[] client(Site s, int site, long[] failed, java.util.concurrent.atomic.AtomicLong committed) throws Exception {
        Histogram exec = new Histogram(3), commit = new Histogram(3);
        Random r = new Random(site);
        try (Connection c = OpenLoopUpdates.connect(s)) {
            c.setAutoCommit(false);
            try (Statement st = c.createStatement()) {
                for (int n = 0; n < warmup + blocks; n++) {
                    int id = site * 1000 + 1 + r.nextInt(1000);   // this client's own rows: nothing to abort
                    long t0 = System.nanoTime();
                    long t1;
                    try {
                        try (ResultSet rs = st.executeQuery("SELECT bal FROM cert_acc WHERE id = " + id)) { rs.next(); }
                        st.executeUpdate("UPDATE cert_acc SET bal = bal + 1 WHERE id = " + id);
                        t1 = System.nanoTime();
                        c.commit();
                    } catch (SQLException e) {
                        synchronized (failed) { failed[site]++; }
                        out.printf("site %s: block failed: %s %s%n", s.name(), e.getSQLState(), e.getMessage());
                        try { c.rollback(); } catch (SQLException ignored) { }
                        continue;
                    }
                    long t2 = System.nanoTime();
                    committed.incrementAndGet();
                    if (n >= warmup) {
                        exec.recordValue((t1 - t0) / 1000);
                        commit.recordValue((t2 - t1) / 1000);
                    }
                    if ((n + 1) % 50 == 0) out.printf("site %s: %d of %d blocks%n", s.name(), n + 1, warmup + blocks);
                    Thread.sleep(pauseMs);
                }
            }
        }
        return new Histogram[]{exec, commit};
    }

    /** The site's certification counters: blocks certified (every site's: each site certifies all), its own clients' aborted. */
    private static long[] certification(Site s) throws Exception {
        try (Connection c = OpenLoopUpdates.connect(s); Statement st = c.createStatement(); ResultSet r = st.executeQuery("SHOW wanrep.certification")) {
            r.next();
            return new long[]{r.getLong("certified_commits"), r.getLong("aborts_of_own_clients")};
        }
    }

    public static String table(List<SiteResult> rs) {
        StringBuilder b = new StringBuilder(String.format("%-10s %6s %9s %11s %11s %9s %9s %9s %8s %7s %s%n",
                "site", "blocks", "exec p50", "commit p50", "commit p99", "bound", "limit", "certified", "aborted", "failed", "verdict"));
        for (SiteResult r : rs)
            b.append(String.format("%-10s %6d %9.1f %11.1f %11.1f %9.1f %9.1f %9d %8d %7d %s%n", r.site(), r.blocks(), r.execP50Ms(),
                    r.commitP50Ms(), r.commitP99Ms(), r.boundMs(), r.limitMs(), r.certified(), r.aborted(), r.failed(), r.pass() ? "PASS" : "FAIL"));
        b.append("(ms; bound: the origin's analytical final-delivery bound; limit: 1.2 x bound + 10 ms; certified: blocks this site\n"
                + " certified, every site's, of ").append(rs.isEmpty() ? 0 : rs.get(0).committedInAll())
                .append(" the clients committed, warm-up included: fewer means some took the exclusive path; aborted: its own clients')\n");
        return b.toString();
    }

    public static String json(List<SiteResult> rs, String matrix, String delivery) throws Exception {
        List<Map<String, Object>> list = new ArrayList<>();
        for (SiteResult r : rs) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("site", r.site());
            m.put("blocks", r.blocks());
            m.put("exec_p50_ms", round(r.execP50Ms()));
            m.put("commit_p50_ms", round(r.commitP50Ms()));
            m.put("commit_p99_ms", round(r.commitP99Ms()));
            m.put("bound_origin_ms", round(r.boundMs()));
            m.put("limit_ms", round(r.limitMs()));
            m.put("certified", r.certified());
            m.put("aborted", r.aborted());
            m.put("failed", r.failed());
            m.put("committed_in_all", r.committedInAll());
            m.put("pass", r.pass());
            list.add(m);
        }
        Map<String, Object> top = new LinkedHashMap<>();
        top.put("benchmark", "certify-latency");
        top.put("latency_matrix", matrix);
        top.put("delivery", delivery);
        top.put("results", list);
        return new ObjectMapper().writeValueAsString(top);
    }

    private static double round(double v) { return Math.round(v * 100) / 100.0; }
}
