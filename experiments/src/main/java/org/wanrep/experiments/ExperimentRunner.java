package org.wanrep.experiments;

import org.wanrep.emulator.Arrivals;
import org.wanrep.emulator.DataLoad;
import org.wanrep.emulator.EmulatorConfig;
import org.wanrep.emulator.EmulatorGroup;
import org.wanrep.emulator.Load;
import org.wanrep.emulator.SiteTarget;
import org.wanrep.emulator.report.ResultFiles;
import org.wanrep.emulator.report.RunResult;
import org.wanrep.emulator.report.SiteResult;
import org.wanrep.emulator.report.TypeResult;
import org.wanrep.emulator.synthetic.SyntheticWorkload;
import org.wanrep.experiments.Experiment.Setup;
import org.wanrep.experiments.Results.Status;
import org.wanrep.gcs.wan.LatencyMatrix;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.site.InProcessCluster;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * Runs an {@link Experiment}: for every setup and number of sites one cluster in this process
 * (one throw-away PostgreSQL and one wanrep site each, or a plain PostgreSQL server), the data
 * loaded once, then every load in ascending order on the same cluster (the proxies' phase
 * statistics are reset at each point's measured window). A point that does not keep up is recorded
 * as saturated and the setup's higher loads are skipped; the run never waits out a saturated
 * schedule. At the end of each cluster every replica is compared. Files are rewritten after every
 * point, so an interrupted run keeps what it measured.
 */
public final class ExperimentRunner {
    /** Throughput below this share of the offered load means the point did not keep up. */
    public static final double MIN_THROUGHPUT_SHARE = 0.9;
    /**
     * Other processes keeping more than this many cores busy on average during a point disturb it:
     * the point is run once more, and if that is disturbed too, it is left out of the findings.
     */
    public static final double DISTURBED_CORES = 0.5;
    public static final int ATTEMPTS = 2;

    /**
     * @param out          where the experiment's directory goes ({@code OUT/NAME})
     * @param seed         workload seed; every point uses it, so setups see the same transactions
     * @param connections  client connections per site's emulator
     * @param attempts     runs of a point disturbed by other processes (more than {@link #DISTURBED_CORES} cores) before it is left out
     */
    public record Options(Path out, long seed, int connections, Duration progressEvery, int attempts) {
        public Options {
            if (attempts < 1) throw new IllegalArgumentException("attempts must be >= 1");
        }

        public static Options defaults(Path out) { return new Options(out, 1, EmulatorConfig.DEFAULT_CONNECTIONS, Duration.ofSeconds(10), ATTEMPTS); }
    }

    private final Options o;
    private final PrintStream out;

    public ExperimentRunner(Options o, PrintStream out) {
        this.o = o;
        this.out = out;
    }

    /** Runs every point and writes CSV, JSON, plots and the report into {@code OUT/NAME}; returns what was measured. */
    public Results run(Experiment e) throws IOException, InterruptedException {
        Path dir = o.out().resolve(e.name());
        clean(dir);
        Instant started = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
        long t0 = System.nanoTime();
        List<Results.Row> rows = new ArrayList<>();
        List<Results.PhaseRow> phases = new ArrayList<>();
        List<Results.Check> checks = new ArrayList<>();
        out.printf(Locale.ROOT, "experiment %s (%s): %s%n  %s; %d points (%d setups x %s sites x %s tps), %d transactions per site and point; about %s%n",
                e.name(), e.variant(), e.title(), e.study(), e.points(), e.setups().size(), e.siteCounts(), e.loads().stream().map(Finding::num).toList(),
                e.transactionsPerSite(), duration(e.estimatedSeconds()));
        int done = 0;
        for (Setup s : e.setups()) {
            for (int n : e.siteCounts()) {
                List<String> sites = siteNames(e, s, n);
                SyntheticWorkload w = e.workload().create();
                Map<String, String> settings = new LinkedHashMap<>(s.settings());
                if (s.primaries()) {
                    Map<String, String> primaries = SyntheticWorkload.roundRobinPrimaries(w.tables(), sites);
                    primaries.forEach((t, site) -> settings.put("tables.public." + t + ".primary", site));
                    w = w.withPrimaries(primaries, sites);
                }
                List<String> types = Stream.concat(w.types().stream(), Stream.of("all")).toList();
                out.printf(Locale.ROOT, "%n[%s] setup %s (%s) on %d site%s %s: starting%n", e.name(), s.id(), describe(s), n, n == 1 ? "" : "s", sites);
                Cluster c;
                try {
                    c = Cluster.start(e, s, sites, settings, out);
                } catch (Exception ex) {
                    String why = "not run: " + oneLine(ex);
                    out.printf("  %s%n", why);
                    for (double l : e.loads()) for (String t : types) rows.add(Results.Row.notRun(s.id(), n, l, t, Status.NOT_RUN, why));
                    checks.add(new Results.Check(s.id(), n, why));
                    done += e.loads().size();
                    write(e, dir, started, t0, rows, phases, checks, false);
                    continue;
                }
                try (c) {
                    DataLoad.throughFirstSite(w, c.targets(), EmulatorConfig.builder(w, new Load.Open(1, Arrivals.FIXED)).build().connectionProperties(), out);
                    warmUp(e, c, w, n);
                    String skip = null;
                    for (double load : e.loads()) {
                        done++;
                        if (skip != null) {
                            for (String t : types) rows.add(Results.Row.notRun(s.id(), n, load, t, Status.SKIPPED, skip));
                            continue;
                        }
                        Point p = runPointAttempts(e, s, c, w, n, load, types, done, dir);
                        rows.addAll(p.rows);
                        phases.addAll(p.phases);
                        if (p.status == Status.SATURATED) skip = "skipped: " + s.id() + " saturated at " + Finding.num(load) + " tps on " + n + " sites";
                        else {
                            try {
                                c.awaitQuiescent(Duration.ofMillis((long) e.capMs() + 60_000));
                            } catch (IllegalStateException busy) {
                                skip = "skipped: the cluster was still busy after " + Finding.num(load) + " tps (" + busy.getMessage() + ")";
                            }
                        }
                        write(e, dir, started, t0, rows, phases, checks, false);
                    }
                    String verdict = c.check();
                    checks.add(new Results.Check(s.id(), n, verdict));
                    out.printf("  replicas: %s%n", verdict);
                } catch (Exception ex) {
                    if (ex instanceof InterruptedException ie) throw ie;
                    String why = "failed: " + oneLine(ex);
                    out.printf("  %s%n", why);
                    checks.add(new Results.Check(s.id(), n, why));
                    for (double l : e.loads())
                        if (rows.stream().noneMatch(r -> r.setup().equals(s.id()) && r.sites() == n && r.load() == l))
                            for (String t : types) rows.add(Results.Row.notRun(s.id(), n, l, t, Status.NOT_RUN, why));
                }
                write(e, dir, started, t0, rows, phases, checks, false);
            }
        }
        Results r = write(e, dir, started, t0, rows, phases, checks, true);
        out.printf(Locale.ROOT, "%nexperiment %s done in %s; %s%n", e.name(), duration(r.seconds()), dir.resolve("report.md"));
        return r;
    }

    /** An unmeasured run at the lowest load, so that the first point does not pay for a cold JIT, cold caches and new connections. */
    private void warmUp(Experiment e, Cluster c, SyntheticWorkload w, int n) throws Exception {
        if (e.warmupSeconds() <= 0) return;
        double load = e.loads().get(0);
        int per = Math.max(20, (int) Math.round(load * e.warmupSeconds() / n));
        out.printf(Locale.ROOT, "  warming up: %d transactions per site at %s tps, not measured%n", per, Finding.num(load));
        EmulatorConfig cfg = EmulatorConfig.builder(w, new Load.Open(load, Arrivals.FIXED)).transactions(per).warmupFraction(0)
                .connections(o.connections()).seed(o.seed() + 1_000_003).drainTimeout(Duration.ofMillis((long) e.capMs() + 30_000)).build();
        long backlog = Math.max(50, Math.round(load * e.capMs() / 1000));
        new EmulatorGroup(c.targets(), cfg, null, o.progressEvery()).run((p, secs) -> p.inFlight() > backlog ? "backlog during warm-up" : null);
        c.awaitQuiescent(Duration.ofMillis((long) e.capMs() + 60_000));
    }

    private record Point(Status status, List<Results.Row> rows, List<Results.PhaseRow> phases, double otherCores, RunResult raw) {}

    /**
     * Runs a point; when other processes took more than {@link #DISTURBED_CORES} cores meanwhile, runs it
     * once more and keeps the less disturbed attempt, marked {@code DISTURBED} if it still was.
     */
    private Point runPointAttempts(Experiment e, Setup s, Cluster c, SyntheticWorkload w, int n, double load, List<String> types, int done, Path dir)
            throws Exception {
        Point best = null;
        for (int attempt = 1; attempt <= o.attempts(); attempt++) {
            Point p = runPoint(e, s, c, w, n, load, types, done);
            if (best == null || !(p.otherCores >= best.otherCores)) best = p;
            if (!(p.otherCores > DISTURBED_CORES)) break;
            if (attempt < o.attempts()) {
                out.printf(Locale.ROOT, "  other processes kept %.2f cores busy during this point: running it again%n", p.otherCores);
                c.awaitQuiescent(Duration.ofMillis((long) e.capMs() + 60_000));
            }
        }
        if (best.otherCores > DISTURBED_CORES) {
            String why = String.format(Locale.ROOT, "disturbed: other processes kept %.2f cores busy (of %d)", best.otherCores, Runtime.getRuntime().availableProcessors());
            List<Results.Row> rows = best.rows.stream().map(r -> new Results.Row(r.setup(), r.sites(), r.load(), r.type(), Status.DISTURBED, r.measured(),
                    r.committed(), r.aborts(), r.retries(), r.throughputTps(), r.meanMs(), r.p50Ms(), r.p90Ms(), r.p99Ms(), r.maxMs(), r.otherCores(),
                    r.note().isEmpty() ? why : why + "; " + r.note())).toList();
            out.printf("  %s%s: left out of the findings%n", why, o.attempts() > 1 ? " in every attempt" : "");
            best = new Point(Status.DISTURBED, rows, best.phases, best.otherCores, best.raw);
        }
        ResultFiles.write(best.raw, dir.resolve("points").resolve(String.format(Locale.ROOT, "%s-%dsites-%stps", s.id(), n, Finding.num(load))));
        return best;
    }

    private Point runPoint(Experiment e, Setup s, Cluster c, SyntheticWorkload w, int n, double load, List<String> types, int done) throws Exception {
        double capS = e.capMs() / 1000;
        EmulatorConfig cfg = EmulatorConfig.builder(w, new Load.Open(load, Arrivals.FIXED)).transactions(e.transactionsPerSite())
                .warmupFraction(e.warmupFraction()).connections(o.connections()).seed(o.seed())
                .drainTimeout(Duration.ofMillis((long) e.capMs() + 30_000)).build();
        out.printf(Locale.ROOT, "[%s %d/%d] %s, %d site%s, %s tps: %d transactions per site (about %s)%n", e.name(), done, e.points(), s.id(), n, n == 1 ? "" : "s",
                Finding.num(load), e.transactionsPerSite(), duration(n * (double) e.transactionsPerSite() / load));
        long backlog = Math.max(50, Math.round(load * capS));
        CpuMeter.Sample before = c.cpu().sample();
        RunResult rr = new EmulatorGroup(c.targets(), cfg, out, o.progressEvery()).run((p, secs) -> p.inFlight() > backlog
                ? String.format(Locale.ROOT, "%d transactions unanswered at %s tps: their mean response time is above the %s s cap (Little's law)",
                p.inFlight(), Finding.num(load), Finding.num(capS))
                : null);
        double others = CpuMeter.foreignCores(before, c.cpu().sample());
        rr = rr.withContext(Map.of("experiment", e.name(), "setup", s.id(), "settings", s.settings(), "sites", n, "other_cores", others));

        SiteResult all = rr.allSites() != null ? rr.allSites() : rr.sites().get(0);
        long unfinished = rr.sites().stream().mapToLong(SiteResult::unfinished).sum();
        String note = "";
        Status st = Status.OK;
        if (rr.settings().get("stopped") != null) {
            st = Status.SATURATED;
            note = "stopped: " + rr.settings().get("stopped");
        } else if (unfinished > 0) {
            st = Status.SATURATED;
            note = unfinished + " transactions never answered";
        } else if (all.all().throughputTps() < MIN_THROUGHPUT_SHARE * load) {
            st = Status.SATURATED;
            note = String.format(Locale.ROOT, "throughput %.1f tps of %s offered", all.all().throughputTps(), Finding.num(load));
        } else if (all.all().p50Ms() > e.capMs()) {
            st = Status.SATURATED;
            note = String.format(Locale.ROOT, "median response time %.0f ms above the %s ms cap", all.all().p50Ms(), Finding.num(e.capMs()));
        }
        if (all.all().aborts() > 0) note = (note.isEmpty() ? "" : note + "; ") + all.all().aborts() + " aborted: " + all.all().lastError();
        if (all.dispatchLagP99Ms() > 50) note = (note.isEmpty() ? "" : note + "; ") + String.format(Locale.ROOT, "emulator dispatch lag p99 %.0f ms (busy machine)", all.dispatchLagP99Ms());

        List<Results.Row> rows = new ArrayList<>();
        List<TypeResult> byType = new ArrayList<>(all.types());
        byType.add(all.all());
        for (String t : types) {
            TypeResult x = byType.stream().filter(y -> y.type().equals(t)).findFirst().orElse(null);
            if (x == null) continue;
            rows.add(new Results.Row(s.id(), n, load, t, st, x.measured(), x.committed(), x.aborts(), x.retries(), x.throughputTps(),
                    x.committed() > 0 ? x.meanMs() : Double.NaN, x.committed() > 0 ? x.p50Ms() : Double.NaN, x.committed() > 0 ? x.p90Ms() : Double.NaN,
                    x.committed() > 0 ? x.p99Ms() : Double.NaN, x.committed() > 0 ? x.maxMs() : Double.NaN, others, note));
        }
        List<Results.PhaseRow> phases = new ArrayList<>();
        for (SiteResult site : rr.sites())
            for (var p : site.phases())
                phases.add(new Results.PhaseRow(s.id(), n, load, site.site(), p.phase(), p.count(), p.meanMs(), p.p50Ms(), p.p99Ms()));

        StringBuilder b = new StringBuilder("  -> ");
        for (TypeResult x : all.types())
            if (x.committed() > 0) b.append(String.format(Locale.ROOT, "%s p50 %.1f ms (mean %.1f), ", x.type(), x.p50Ms(), x.meanMs()));
        b.append(String.format(Locale.ROOT, "%.1f tps", all.all().throughputTps()));
        if (!Double.isNaN(others)) b.append(String.format(Locale.ROOT, "; others %.2f cores", others));
        if (st != Status.OK) b.append(" [SATURATED]");
        if (!note.isEmpty()) b.append(" (").append(note).append(')');
        out.println(b);
        return new Point(st, rows, phases, others, rr);
    }

    private Results write(Experiment e, Path dir, Instant started, long t0, List<Results.Row> rows, List<Results.PhaseRow> phases, List<Results.Check> checks,
                          boolean last) throws IOException {
        Results r = new Results(e, started.toString(), Math.round((System.nanoTime() - t0) / 1e8) / 10.0, rows, phases, checks);
        ExperimentFiles.writeData(r, dir);
        if (last) ExperimentFiles.writeReport(r, dir);
        return r;
    }

    /** Removes what an earlier run of this experiment wrote (only our own files). */
    private static void clean(Path dir) throws IOException {
        Files.createDirectories(dir);
        Path points = dir.resolve("points");
        if (Files.isDirectory(points))
            try (Stream<Path> w = Files.walk(points)) {
                for (Path p : w.sorted(Comparator.reverseOrder()).toList()) Files.delete(p);
            }
        try (Stream<Path> l = Files.list(dir)) {
            for (Path p : l.toList()) {
                String f = p.getFileName().toString();
                if (Files.isRegularFile(p) && (f.endsWith(".csv") || f.endsWith(".png") || f.equals("results.json") || f.equals("report.md"))) Files.delete(p);
            }
        }
    }

    static List<String> siteNames(Experiment e, Setup s, int n) {
        if (s.target() == Experiment.Target.POSTGRES) return List.of("postgres");
        if (e.matrix().equals("none")) return IntStream.rangeClosed(1, n).mapToObj(i -> "site" + i).toList();
        return LatencyMatrix.load(e.matrix()).first(n).sites();
    }

    static String describe(Setup s) {
        if (s.target() == Experiment.Target.POSTGRES) return "plain PostgreSQL, no middleware";
        StringBuilder b = new StringBuilder();
        s.settings().forEach((k, v) -> b.append(b.isEmpty() ? "" : ", ").append(k).append(' ').append(v));
        if (s.primaries()) b.append(", primaries round robin");
        return b.toString();
    }

    public static String duration(double seconds) {
        if (seconds < 90) return Math.round(seconds) + " s";
        if (seconds < 5400) return Math.round(seconds / 60) + " min";
        return String.format(Locale.ROOT, "%.1f h", seconds / 3600);
    }

    private static String oneLine(Throwable t) {
        String m = t.getMessage() == null ? t.toString() : t.getMessage();
        return m.replace('\n', ' ');
    }

    /** The clients' side of a cluster: where to connect, how to wait until it is idle, how to compare replicas. */
    interface Cluster extends AutoCloseable {
        List<SiteTarget> targets();
        /** Measures other processes' CPU: ours are this JVM and this cluster's PostgreSQL servers. */
        CpuMeter cpu();
        void awaitQuiescent(Duration timeout) throws InterruptedException;
        String check() throws Exception;
        @Override void close();

        static Cluster start(Experiment e, Setup s, List<String> sites, Map<String, String> settings, PrintStream out) throws Exception {
            if (s.target() == Experiment.Target.POSTGRES) {
                LocalPostgres pg = LocalPostgres.startTemporary();
                CpuMeter meter = CpuMeter.of(List.of(pg.dataDir()));
                return new Cluster() {
                    public CpuMeter cpu() { return meter; }
                    public List<SiteTarget> targets() { return List.of(SiteTarget.of(sites.get(0), pg.host(), pg.port(), "postgres")); }
                    public void awaitQuiescent(Duration timeout) { }
                    public String check() { return "same (one server)"; }
                    public void close() {
                        try {
                            pg.close();
                        } catch (IOException ignored) {
                            // closing anyway
                        }
                    }
                };
            }
            InProcessCluster c = new InProcessCluster(sites, e.matrix(), settings, out);
            List<Path> dirs = new ArrayList<>();
            for (int i = 0; i < sites.size(); i++) dirs.add(c.postgres(i).dataDir());
            CpuMeter meter = CpuMeter.of(dirs);
            return new Cluster() {
                public CpuMeter cpu() { return meter; }
                public List<SiteTarget> targets() {
                    List<SiteTarget> ts = new ArrayList<>();
                    for (int i = 0; i < sites.size(); i++) ts.add(SiteTarget.of(sites.get(i), "127.0.0.1", c.site(i).proxyPort(), "postgres"));
                    return ts;
                }

                public void awaitQuiescent(Duration timeout) throws InterruptedException { c.awaitQuiescent(timeout); }

                public String check() throws Exception {
                    Map<String, String> v = c.check();
                    List<String> bad = v.entrySet().stream().filter(x -> !x.getValue().equals("same")).map(x -> x.getKey() + ": " + x.getValue()).toList();
                    return bad.isEmpty() ? "same" : "DIFFER: " + String.join("; ", bad);
                }

                public void close() { c.close(); }
            };
        }
    }
}
