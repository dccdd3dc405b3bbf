package org.wanrep.demo;

import org.wanrep.emulator.Arrivals;
import org.wanrep.emulator.DataLoad;
import org.wanrep.emulator.EmulatorConfig;
import org.wanrep.emulator.EmulatorGroup;
import org.wanrep.emulator.Load;
import org.wanrep.emulator.SiteTarget;
import org.wanrep.emulator.report.ResultFiles;
import org.wanrep.emulator.report.RunResult;
import org.wanrep.emulator.report.SummaryTable;
import org.wanrep.emulator.synthetic.SyntheticWorkload;
import org.wanrep.gcs.wan.LatencyMatrix;
import org.wanrep.plot.RunCharts;
import org.wanrep.site.InProcessCluster;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The main job: a cluster on this machine on an emulated WAN, one client emulator per site running
 * the study's synthetic workload (half 10-update transactions, half read-only transactions of the
 * same size) open loop for about a minute, then the results table with the middleware's response-time
 * breakdown per site, a replica check, plots, and the result files.
 */
public final class Demo {
    public record Options(String matrix, int sites, String delivery, double rate, int seconds, long seed, int connections, Path out) {}

    private final Options o;
    private final PrintStream out;

    public Demo(Options o, PrintStream out) {
        this.o = o;
        this.out = out;
    }

    /** Runs the demo; returns true when the replicas ended identical and every transaction answered. */
    public boolean run() throws Exception {
        LatencyMatrix m = LatencyMatrix.load(o.matrix());
        List<String> sites = m.first(Math.min(o.sites(), m.sites().size())).sites();
        out.printf("wanrep demo: %d sites %s on latency matrix %s, %s delivery, symmetric execution%n", sites.size(), sites, o.matrix(), o.delivery());
        try (InProcessCluster c = new InProcessCluster(sites, o.matrix(), Map.of("delivery", o.delivery()), out)) {
            List<SiteTarget> targets = new ArrayList<>();
            for (int i = 0; i < sites.size(); i++) targets.add(SiteTarget.of(sites.get(i), "127.0.0.1", c.site(i).proxyPort(), "postgres"));
            SyntheticWorkload w = new SyntheticWorkload();
            int perSite = Math.max(20, (int) Math.round(o.rate() * o.seconds() / sites.size()));
            EmulatorConfig cfg = EmulatorConfig.builder(w, new Load.Open(o.rate(), Arrivals.FIXED)).transactions(perSite)
                    .connections(o.connections()).seed(o.seed()).build();
            DataLoad.throughFirstSite(w, targets, cfg.connectionProperties(), out);
            out.printf("running %d transactions per site, %.0f per second in all (open loop, seed %d; the first and last %d per site are not measured)...%n",
                    perSite, o.rate(), o.seed(), cfg.warmup());
            RunResult r = new EmulatorGroup(targets, cfg, out, EmulatorGroup.DEFAULT_PROGRESS).run();
            out.println();
            out.print(SummaryTable.of(r));

            out.println();
            out.println("cluster check (every table, every replica):");
            Map<String, String> verdict = c.check();
            boolean same = verdict.values().stream().allMatch("same"::equals);
            verdict.forEach((t, v) -> out.printf("  %-28s %s%n", t, v));
            out.println(same ? "  all replicas identical" : "  REPLICAS DIFFER");

            Map<String, Object> context = new LinkedHashMap<>();
            context.put("latency_matrix", o.matrix());
            context.put("sites", sites);
            context.put("delivery", o.delivery());
            context.put("execution", "symmetric");
            context.put("replica_check", verdict);
            r = r.withContext(context);
            List<Path> files = new ArrayList<>(ResultFiles.write(r, o.out()));
            files.add(RunCharts.responseTimes(r, o.out().resolve("response_times.png")));
            Path phases = RunCharts.phases(r, o.out().resolve("phases.png"));
            if (phases != null) files.add(phases);
            out.printf("%nwrote %s%n", files);
            boolean answered = r.sites().stream().allMatch(s -> s.unfinished() == 0);
            return same && answered;
        }
    }

}
