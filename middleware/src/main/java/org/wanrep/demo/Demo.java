package org.wanrep.demo;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.HdrHistogram.Histogram;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.data.category.DefaultCategoryDataset;
import org.wanrep.bench.OpenLoop;
import org.wanrep.bench.Synthetic;
import org.wanrep.gcs.wan.LatencyMatrix;
import org.wanrep.site.InProcessCluster;
import org.wanrep.txn.PhaseStats;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

/**
 * The main job: a cluster on this machine on an emulated WAN, the study's synthetic workload (half
 * 10-update transactions, half read-only transactions of the same size) for about a minute, then a
 * results table, the middleware's response-time breakdown per site, a replica check, and a plot.
 */
public final class Demo {
    public record Options(String matrix, int sites, String delivery, double rate, int seconds, long seed, Path out) {}

    private final Options o;
    private final PrintStream out;

    public Demo(Options o, PrintStream out) {
        this.o = o;
        this.out = out;
    }

    /** Runs the demo; returns true when the replicas ended identical. */
    public boolean run() throws Exception {
        LatencyMatrix m = LatencyMatrix.load(o.matrix());
        List<String> sites = m.first(Math.min(o.sites(), m.sites().size())).sites();
        out.printf("wanrep demo: %d sites %s on latency matrix %s, %s delivery, symmetric execution%n", sites.size(), sites, o.matrix(), o.delivery());
        try (InProcessCluster c = new InProcessCluster(sites, o.matrix(), Map.of("delivery", o.delivery()), out)) {
            out.println("loading the synthetic database (10 tables x 10,000 rows) through the first site...");
            try (Connection conn = c.connect(0)) {
                Synthetic.create(conn);
            }
            c.awaitQuiescent(Duration.ofSeconds(120));
            List<BlockingQueue<Connection>> pools = new ArrayList<>();
            for (int i = 0; i < sites.size(); i++) {
                BlockingQueue<Connection> q = new ArrayBlockingQueue<>(16);
                for (int k = 0; k < 16; k++) q.add(c.connect(i));
                pools.add(q);
                try (Connection conn = c.connect(i); var st = conn.createStatement()) {
                    st.execute("RESET wanrep.phases");
                }
            }
            int total = (int) Math.round(o.rate() * o.seconds());
            int warmup = Math.max(10, total / 10);
            out.printf("running %d transactions at %.0f per second in all (open loop, spread over the sites; the first %d are warm-up)...%n",
                    total, o.rate(), warmup);
            OpenLoop load = new OpenLoop(sites, pools);
            // the phase breakdown should cover the measured part only: reset it when warm-up ends
            Thread resetter = Thread.ofVirtual().start(() -> {
                try {
                    Thread.sleep((long) (warmup / o.rate() * 1000));
                    for (int i = 0; i < sites.size(); i++) c.site(i).engine().phaseStats().reset();
                } catch (InterruptedException ignored) {
                    // the run ended first
                }
            });
            long t0 = System.nanoTime();
            load.run(o.rate(), total, warmup, r -> r.nextBoolean()
                    ? new OpenLoop.Txn("update", Synthetic.updateTxn(r)) : new OpenLoop.Txn("query", Synthetic.queryTxn(r)), o.seed(), out);
            double elapsed = (System.nanoTime() - t0) / 1e9;
            resetter.interrupt();
            for (BlockingQueue<Connection> q : pools) for (Connection conn : q) conn.close();

            out.println();
            out.printf("response times (ms, from each transaction's scheduled start), %.0f s, %.1f transactions/s achieved:%n", elapsed, total / elapsed);
            OpenLoop.statsSummary(load.stats()).forEach(out::println);
            out.println();
            out.println("where an update's time goes, per origin site (middleware phases, ms):");
            out.printf("%-14s %-20s %7s %9s %9s %9s%n", "site", "phase", "count", "mean", "p50", "p99");
            Map<String, List<PhaseStats.Summary>> phases = new LinkedHashMap<>();
            for (int i = 0; i < sites.size(); i++) {
                List<PhaseStats.Summary> ss = c.site(i).engine().phaseStats().summaries();
                phases.put(sites.get(i), ss);
                for (PhaseStats.Summary x : ss)
                    if (x.count() > 0) out.printf("%-14s %-20s %7d %9.1f %9.1f %9.1f%n", sites.get(i), x.phase(), x.count(), x.meanMs(), x.p50Ms(), x.p99Ms());
            }
            out.println();
            out.println("cluster check (every table, every replica):");
            Map<String, String> verdict = c.check();
            boolean same = verdict.values().stream().allMatch("same"::equals);
            verdict.forEach((t, v) -> out.printf("  %-28s %s%n", t, v));
            out.println(same ? "  all replicas identical" : "  REPLICAS DIFFER");
            write(sites, load, phases, verdict, elapsed, total);
            return same;
        }
    }

    private void write(List<String> sites, OpenLoop load, Map<String, List<PhaseStats.Summary>> phases, Map<String, String> verdict,
                       double elapsed, int total) throws Exception {
        Files.createDirectories(o.out());
        List<Map<String, Object>> rows = new ArrayList<>();
        StringBuilder csv = new StringBuilder("site,type,txns,errors,p50_ms,p90_ms,p99_ms\n");
        DefaultCategoryDataset ds = new DefaultCategoryDataset();
        for (var e : load.stats().entrySet()) {
            Histogram h = e.getValue().latencyUs;
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("site", e.getKey().site());
            r.put("type", e.getKey().type());
            r.put("txns", h.getTotalCount());
            r.put("errors", e.getValue().errors.get());
            r.put("p50_ms", h.getValueAtPercentile(50) / 1000.0);
            r.put("p90_ms", h.getValueAtPercentile(90) / 1000.0);
            r.put("p99_ms", h.getValueAtPercentile(99) / 1000.0);
            rows.add(r);
            csv.append(String.join(",", e.getKey().site(), e.getKey().type(), Long.toString(h.getTotalCount()), Long.toString(e.getValue().errors.get()),
                    Double.toString(h.getValueAtPercentile(50) / 1000.0), Double.toString(h.getValueAtPercentile(90) / 1000.0),
                    Double.toString(h.getValueAtPercentile(99) / 1000.0))).append('\n');
        }
        for (String s : sites) {
            for (String type : List.of("update", "query")) {
                OpenLoop.Stats st = load.stats().get(new OpenLoop.Key(s, type));
                if (st != null) ds.addValue(st.latencyUs.getValueAtPercentile(50) / 1000.0, type + " p50", s);
            }
        }
        Map<String, Object> top = new LinkedHashMap<>();
        top.put("latency_matrix", o.matrix());
        top.put("sites", sites);
        top.put("delivery", o.delivery());
        top.put("execution", "symmetric");
        top.put("rate_tps", o.rate());
        top.put("transactions", total);
        top.put("elapsed_s", elapsed);
        top.put("response_times", rows);
        top.put("phases", phases);
        top.put("check", verdict);
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(o.out().resolve("results.json").toFile(), top);
        Files.writeString(o.out().resolve("results.csv"), csv);
        System.setProperty("java.awt.headless", "true");
        JFreeChart chart = ChartFactory.createBarChart("wanrep demo: median response time per site (" + o.delivery() + ", " + o.matrix() + ")",
                "site", "ms", ds, PlotOrientation.VERTICAL, true, false, false);
        ChartUtils.saveChartAsPNG(o.out().resolve("response_times.png").toFile(), chart, 900, 500);
        out.printf("%nwrote %s, results.csv and response_times.png%n", o.out().resolve("results.json"));
    }
}
