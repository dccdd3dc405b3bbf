package org.wanrep.experiments;

import org.wanrep.emulator.report.ResultFiles;
import org.wanrep.emulator.synthetic.SyntheticWorkload;
import org.wanrep.experiments.Experiment.Axis;
import org.wanrep.experiments.Experiment.Breakdown;
import org.wanrep.experiments.Experiment.Curve;
import org.wanrep.experiments.Experiment.Deliveries;
import org.wanrep.experiments.Experiment.Lines;
import org.wanrep.experiments.Experiment.Overlap;
import org.wanrep.experiments.Experiment.Panel;
import org.wanrep.experiments.Experiment.Setup;
import org.wanrep.experiments.Finding.Evaluation;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * An experiment's files in {@code runs/experiments/NAME/}: {@code points.csv} (one row per point and
 * transaction type), {@code phases.csv} (middleware phases per point and site), {@code breakdown.csv}
 * and {@code overlap.csv} where the figure has them, {@code results.json} (all of it, with the
 * definition and the findings), one PNG per panel and {@code report.md}. Each point's raw emulator
 * results (with HdrHistograms) are in {@code points/SETUP-Nsites-Ltps/}.
 */
public final class ExperimentFiles {
    private ExperimentFiles() {}

    /** The data files: rewritten after every point. */
    public static void writeData(Results r, Path dir) throws IOException {
        Files.createDirectories(dir);
        Experiment e = r.experiment();
        StringBuilder p = new StringBuilder("experiment,variant,setup,execution,delivery,queries,sites,load_tps,type,status,saturated,measured,committed,aborts,"
                + "retries,throughput_tps,mean_ms,p50_ms,p90_ms,p99_ms,max_ms,other_cores,note\n");
        for (Results.Row x : r.rows()) {
            Setup s = e.setup(x.setup());
            p.append(csv(e.name(), e.variant(), x.setup(), s.execution(), s.delivery(), s.queries(), x.sites(), x.load(), x.type(), x.status().name().toLowerCase(Locale.ROOT),
                    x.status().saturated(), x.measured(), x.committed(), x.aborts(), x.retries(), x.throughputTps(), x.meanMs(), x.p50Ms(), x.p90Ms(), x.p99Ms(),
                    x.maxMs(), x.otherCores(), x.note()));
        }
        Files.writeString(dir.resolve("points.csv"), p);

        StringBuilder ph = new StringBuilder("experiment,setup,sites,load_tps,site,phase,count,mean_ms,p50_ms,p99_ms\n");
        for (Results.PhaseRow x : r.phases())
            ph.append(csv(e.name(), x.setup(), x.sites(), x.load(), x.site(), x.phase(), x.count(), x.meanMs(), x.p50Ms(), x.p99Ms()));
        Files.writeString(dir.resolve("phases.csv"), ph);

        for (Panel panel : e.panels()) {
            if (panel instanceof Breakdown b) {
                StringBuilder s = new StringBuilder("bar,setup,type,load_tps,response_mean_ms," + String.join("_ms,", Derived.BREAKDOWN_PARTS) + "_ms\n");
                for (double l : b.loads())
                    for (Experiment.Bar bar : b.bars())
                        Derived.bar(r, bar, lastSites(e), l).ifPresent(v -> {
                            List<Object> cells = new ArrayList<>(List.of(bar.label(), bar.setup(), bar.type(), l, v.responseMs()));
                            for (String part : Derived.BREAKDOWN_PARTS) cells.add(v.parts().get(part));
                            s.append(csv(cells.toArray()));
                        });
                Files.writeString(dir.resolve(b.id() + "-breakdown.csv"), s);
            } else if (panel instanceof Overlap o) {
                StringBuilder s = new StringBuilder("setup,load_tps,execution_mean_ms,overlapped_mean_ms,overlapped_share,updates\n");
                for (double l : e.loads())
                    Derived.overlap(r, o.setup(), lastSites(e), l).ifPresent(v -> s.append(csv(o.setup(), l, v.executionMs(), v.overlappedMs(), v.fraction(), v.count())));
                Files.writeString(dir.resolve(o.id() + "-overlap.csv"), s);
            }
        }
        ResultFiles.JSON.writeValue(dir.resolve("results.json").toFile(), json(r));
    }

    /** The plots and the report: written once, at the end. */
    public static List<Evaluation> writeReport(Results r, Path dir) throws IOException {
        for (Panel p : r.experiment().panels()) ExperimentCharts.panel(r, p, dir);
        List<Evaluation> ev = evaluate(r);
        Files.writeString(dir.resolve("report.md"), report(r, ev));
        ResultFiles.JSON.writeValue(dir.resolve("results.json").toFile(), json(r));
        return ev;
    }

    public static List<Evaluation> evaluate(Results r) {
        List<Evaluation> ev = new ArrayList<>();
        for (Finding f : r.experiment().findings()) {
            try {
                ev.add(f.evaluate(r));
            } catch (RuntimeException ex) {
                ev.add(new Evaluation(Finding.Verdict.INCONCLUSIVE, "could not evaluate: " + ex));
            }
        }
        return ev;
    }

    /** The line a report gives a finding: {@code study: ... / ours: ... / agrees}. */
    public static String findingLine(Finding f, Evaluation e) {
        return "study: " + f.study() + " / ours: " + e.ours() + " / " + e.verdict().label();
    }

    static String report(Results r, List<Evaluation> ev) {
        Experiment e = r.experiment();
        StringBuilder b = new StringBuilder();
        b.append("# ").append(e.name()).append(": ").append(e.title()).append("\n\n");
        b.append("Reproduces ").append(e.study()).append(" of Lin, Kemme, Patiño-Martínez and Jiménez-Peris, *A Middleware for Consistent Data Replication: ")
                .append("Is it feasible in WANs?*  \n");
        b.append(String.format(Locale.ROOT, "Variant **%s**; run %s, %s, on %d cores (%s %s). Command: `./wanrep experiment run %s%s`.%n%n", e.variant(), r.startedAt(),
                ExperimentRunner.duration(r.seconds()), Runtime.getRuntime().availableProcessors(), System.getProperty("os.name"), System.getProperty("os.arch"),
                e.name(), e.variant().equals("quick") ? " --quick" : ""));

        b.append("## Configuration\n\n");
        b.append("- sites: ").append(e.siteCounts()).append(e.matrix().equals("none") ? ", no emulated delays" : ", the first n of latency matrix `" + e.matrix() + "`")
                .append("; one throw-away PostgreSQL and one wanrep site per site, all in one process on this machine\n");
        b.append(String.format(Locale.ROOT, "- workload: the study's synthetic one, %d tables x %,d rows, %.0f%% update transactions of %d single-row updates, the rest "
                        + "read-only transactions of %d point reads; one client emulator per site, open loop at an even share of the load (fixed arrivals)%n",
                e.workload().tables(), e.workload().rows(), e.workload().updateFraction() * 100, e.workload().statements(), e.workload().statements()));
        b.append(String.format(Locale.ROOT, "- %d transactions per site and point (the study: 800), the first and last %.0f%% not measured; loads %s tps (all sites together)%n",
                e.transactionsPerSite(), e.warmupFraction() * 100, e.loads().stream().map(Finding::num).toList()));
        if (e.warmupSeconds() > 0)
            b.append(String.format(Locale.ROOT, "- each cluster is loaded once and warmed up for %s s at the lowest load (not measured), then runs its loads in "
                    + "ascending order, all with the same workload seed; the proxies' phase statistics cover each point's measured window only%n",
                    Finding.num(e.warmupSeconds())));
        b.append(String.format(Locale.ROOT, "- response times from each transaction's due time; a point is **saturated** when it is stopped for its backlog "
                + "(more transactions unanswered than load x %s s), leaves transactions unanswered, completes less than %.0f%% of its load, or has a median "
                + "above %s s; the setup's higher loads are then skipped (the study shows no overloaded points either)%n", Finding.num(e.capMs() / 1000),
                ExperimentRunner.MIN_THROUGHPUT_SHARE * 100, Finding.num(e.capMs() / 1000)));
        b.append("\n| setup | label | execution | delivery | queries | primaries |\n|---|---|---|---|---|---|\n");
        for (Setup s : e.setups())
            b.append("| ").append(s.id()).append(" | ").append(s.label()).append(" | ").append(s.execution()).append(" | ").append(s.delivery()).append(" | ")
                    .append(s.queries()).append(" | ").append(s.primaries() ? "tables spread round robin over the sites" : "").append(" |\n");

        b.append("\n## Findings\n\n");
        int agree = 0, differ = 0, inconclusive = 0;
        for (int i = 0; i < e.findings().size(); i++) {
            Finding f = e.findings().get(i);
            Evaluation v = ev.get(i);
            switch (v.verdict()) {
                case AGREES -> agree++;
                case DIFFERS -> differ++;
                case INCONCLUSIVE -> inconclusive++;
            }
            b.append(i + 1).append(". ").append(findingLine(f, v).replaceFirst(" / " + v.verdict().label() + "$", " / **" + v.verdict().label() + "**")).append("  \n");
            b.append("   rule: ").append(f.rule()).append("\n");
        }
        b.append(String.format(Locale.ROOT, "%nOf %d findings: %d agree, %d differ, %d inconclusive. How the rules work: `docs/experiments.md`.%n",
                e.findings().size(), agree, differ, inconclusive));

        for (Panel p : e.panels()) {
            b.append("\n## ").append(p.title()).append("\n\n");
            switch (p) {
                case Lines l -> linesTable(b, r, l);
                case Breakdown bd -> breakdownTable(b, r, bd);
                case Overlap o -> overlapTable(b, r, o);
                case Deliveries d -> deliveriesTable(b, r, d);
            }
            b.append("\n![").append(p.id()).append("](").append(p.id()).append(".png)\n");
        }

        labelCheck(b, r);

        b.append("\n## Replicas\n\nAfter each cluster's last point every table was compared across its replicas (row count and md5 in key order):\n\n");
        b.append("| setup | sites | replicas |\n|---|---|---|\n");
        for (Results.Check c : r.checks()) b.append("| ").append(c.setup()).append(" | ").append(c.sites()).append(" | ").append(c.verdict()).append(" |\n");

        b.append("\n## All points\n\nTimes in ms; `others` is how many cores other processes on this machine kept busy during the point.\n\n")
                .append("| setup | sites | load | type | status | measured | aborts | tput/s | p50 | p90 | p99 | mean | others | note |\n")
                .append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Results.Row x : r.rows())
            b.append(String.format(Locale.ROOT, "| %s | %d | %s | %s | %s | %d | %d | %s | %s | %s | %s | %s | %s | %s |%n", x.setup(), x.sites(), Finding.num(x.load()), x.type(),
                    x.status().name().toLowerCase(Locale.ROOT), x.measured(), x.aborts(), cell(x.throughputTps()), cell(x.p50Ms()), cell(x.p90Ms()), cell(x.p99Ms()),
                    cell(x.meanMs()), Double.isNaN(x.otherCores()) ? "-" : String.format(Locale.ROOT, "%.2f", x.otherCores()), x.note().replace("|", "/")));

        if (!e.notes().isEmpty()) {
            b.append("\n## Notes\n\n");
            for (String n : e.notes()) b.append("- ").append(n).append('\n');
        }
        b.append("\n## Files\n\n`points.csv` (one row per point and transaction type), `phases.csv` (middleware phases per point and origin site)")
                .append(e.panels().stream().anyMatch(p -> p instanceof Breakdown || p instanceof Overlap) ? ", the panels' derived tables (`*-breakdown.csv`, `*-overlap.csv`)" : "")
                .append(", `results.json` (everything, with the definition and the findings), one PNG per panel, and each point's emulator results ")
                .append("(`points/SETUP-Nsites-Ltps/results.json` with response-time histograms).\n");
        return b.toString();
    }

    private static void linesTable(StringBuilder b, Results r, Lines l) {
        b.append("Response time ").append(l.metric().name().toLowerCase(Locale.ROOT)).append(" in ms; `sat.` saturated, `skip` not run after a saturated point, ")
                .append("`dist.` disturbed by other work on the machine (left out), `-` not run.\n\n");
        b.append("| ").append(l.x() == Axis.LOAD ? "load (tps)" : "sites");
        for (Curve c : l.curves()) b.append(" | ").append(c.label());
        b.append(" |\n|---");
        b.append("|---".repeat(l.curves().size())).append("|\n");
        TreeMap<Double, List<String>> table = new TreeMap<>();
        List<Double> xs = l.x() == Axis.LOAD ? r.experiment().loads() : r.experiment().siteCounts().stream().map(Integer::doubleValue).toList();
        for (double x : xs) {
            List<String> cells = new ArrayList<>();
            for (Curve c : l.curves()) {
                int n = l.x() == Axis.LOAD ? (c.atSites() != null ? c.atSites() : lastSites(r.experiment())) : (int) x;
                double load = l.x() == Axis.LOAD ? x : (c.atLoad() != null ? c.atLoad() : r.experiment().loads().get(0));
                Double v = r.values(c.label()).get(x);
                Optional<Results.Row> row = r.row(c.setup(), n, load, "all");
                cells.add(v != null ? Finding.ms(v) : row.map(y -> switch (y.status()) {
                    case SATURATED -> "sat.";
                    case SKIPPED -> "skip";
                    case NOT_RUN -> "-";
                    case DISTURBED -> "dist.";
                    case OK -> "n/a";
                }).orElse("-"));
            }
            table.put(x, cells);
        }
        table.forEach((x, cells) -> b.append("| ").append(Finding.num(x)).append(" | ").append(String.join(" | ", cells)).append(" |\n"));
    }

    private static void breakdownTable(StringBuilder b, Results r, Breakdown bd) {
        b.append("Mean ms per update, from the middleware's phases at the origin site (`SHOW wanrep.phases`); `other` is the rest of the mean response time the ")
                .append("clients measured (the proxy, client communication, waiting for a connection). Under primary copy the middleware does not split its phases ")
                .append("by local and remote writes: the write-set wait is charged to remote writes, the other phases are the sites' means over all their updates.\n\n");
        b.append("| bar | load | response | ").append(String.join(" | ", Derived.BREAKDOWN_PARTS)).append(" |\n|---|---|---");
        b.append("|---".repeat(Derived.BREAKDOWN_PARTS.size())).append("|\n");
        for (double l : bd.loads())
            for (Experiment.Bar bar : bd.bars()) {
                Optional<Derived.BarValues> v = Derived.bar(r, bar, lastSites(r.experiment()), l);
                b.append("| ").append(bar.label()).append(" | ").append(Finding.num(l)).append(" | ");
                if (v.isEmpty()) b.append("not measured").append(" |".repeat(Derived.BREAKDOWN_PARTS.size())).append('\n');
                else {
                    b.append(Finding.ms(v.get().responseMs()));
                    for (String part : Derived.BREAKDOWN_PARTS) b.append(" | ").append(Finding.ms(v.get().parts().get(part)));
                    b.append(" |\n");
                }
            }
    }

    private static void overlapTable(StringBuilder b, Results r, Overlap o) {
        b.append("Setup ").append(o.setup()).append(": per origin site, execution starts after the optimistic delivery and the lock wait and lasts the ")
                .append("execution phase; the part of it before the final delivery is overlapped (from each site's phase means, weighted by count).\n\n");
        b.append("| load (tps) | execution mean (ms) | overlapped (ms) | overlapped share | updates |\n|---|---|---|---|---|\n");
        for (double l : r.experiment().loads())
            Derived.overlap(r, o.setup(), lastSites(r.experiment()), l).ifPresent(v -> b.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %d |%n",
                    Finding.num(l), Finding.ms(v.executionMs()), Finding.ms(v.overlappedMs()), Finding.pct(v.fraction()), v.count())));
    }

    private static void deliveriesTable(StringBuilder b, Results r, Deliveries d) {
        b.append("Mean ms from the multicast to the delivery at the origin (middleware phases `delivery` and, under opt-safe, `optimistic_delivery`).\n\n");
        b.append("| load (tps)");
        List<String[]> cols = new ArrayList<>();
        for (String s : d.setups())
            for (String ph : new String[]{"delivery", "optimistic_delivery"})
                if (r.phases().stream().anyMatch(x -> x.setup().equals(s) && x.phase().equals(ph) && x.count() > 0)) {
                    cols.add(new String[]{s, ph});
                    b.append(" | ").append(s).append(ph.equals("delivery") ? "" : " optimistic");
                }
        b.append(" |\n|---").append("|---".repeat(cols.size())).append("|\n");
        for (double l : r.experiment().loads()) {
            b.append("| ").append(Finding.num(l));
            for (String[] c : cols) {
                boolean ok = r.ok(c[0], lastSites(r.experiment()), l);
                b.append(" | ").append(ok ? Derived.phaseMean(r, c[0], lastSites(r.experiment()), l, c[1]).map(Finding::ms).orElse("-") : "-");
            }
            b.append(" |\n");
        }
    }

    /**
     * Under primary copy the emulators label remote writes by the executor rule; the middleware counts
     * the write-set waits of the updates each site originated. The two should match (give or take the
     * transactions at the window's edges): a mismatch means the label rule and the middleware disagree.
     */
    private static void labelCheck(StringBuilder b, Results r) {
        List<String> lines = new ArrayList<>();
        for (Setup s : r.experiment().setups()) {
            if (!s.primaries()) continue;
            for (int n : r.experiment().siteCounts())
                for (double l : r.experiment().loads()) {
                    Optional<Results.Row> rw = r.row(s.id(), n, l, SyntheticWorkload.UPDATE_RW).filter(Results.Row::ok);
                    if (rw.isEmpty()) continue;
                    long waits = r.phases(s.id(), n, l).stream().filter(p -> p.phase().equals("writeset_wait")).mapToLong(Results.PhaseRow::count).sum();
                    lines.add(String.format(Locale.ROOT, "| %s | %d | %s | %d | %d |", s.id(), n, Finding.num(l), rw.get().committed(), waits));
                }
        }
        if (lines.isEmpty()) return;
        b.append("\n## Local and remote writes: label check\n\nThe emulators label an update a remote write (`update-rw`) when its site is not the one that ")
                .append("executes it (the primary of most of its written tables, a tie going to the origin: the middleware's executor rule); ")
                .append("the middleware counts write-set waits at the origin. The ")
                .append("columns should agree within the transactions straddling the measured window's edges.\n\n")
                .append("| setup | sites | load | remote writes (emulators) | write-set waits (middleware) |\n|---|---|---|---|---|\n");
        lines.forEach(x -> b.append(x).append('\n'));
    }

    private static Map<String, Object> json(Results r) {
        Map<String, Object> m = new LinkedHashMap<>();
        Experiment e = r.experiment();
        m.put("experiment", e.name());
        m.put("variant", e.variant());
        m.put("title", e.title());
        m.put("study", e.study());
        m.put("started_at", r.startedAt());
        m.put("seconds", r.seconds());
        m.put("definition", e);
        List<Map<String, Object>> fs = new ArrayList<>();
        List<Evaluation> ev = evaluate(r);
        for (int i = 0; i < e.findings().size(); i++) {
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("study", e.findings().get(i).study());
            f.put("rule", e.findings().get(i).rule());
            f.put("ours", ev.get(i).ours());
            f.put("verdict", ev.get(i).verdict().label());
            fs.add(f);
        }
        m.put("findings", fs);
        m.put("points", r.rows());
        m.put("phases", r.phases());
        m.put("checks", r.checks());
        return m;
    }

    static int lastSites(Experiment e) { return e.siteCounts().get(e.siteCounts().size() - 1); }

    private static String cell(double v) { return Double.isNaN(v) ? "-" : Finding.ms(v); }

    private static String csv(Object... values) {
        List<String> cells = new ArrayList<>();
        for (Object v : values) {
            String s;
            if (v == null) s = "";
            else if (v instanceof Double d) s = d.isNaN() ? "" : String.format(Locale.ROOT, "%.3f", d);
            else s = v.toString();
            cells.add(s.contains(",") || s.contains("\"") || s.contains("\n") ? "\"" + s.replace("\"", "\"\"") + "\"" : s);
        }
        return String.join(",", cells) + "\n";
    }
}
