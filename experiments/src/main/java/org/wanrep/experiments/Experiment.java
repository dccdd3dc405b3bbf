package org.wanrep.experiments;

import org.wanrep.emulator.synthetic.SyntheticWorkload;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/**
 * One figure of the study as data: the configurations compared ({@link Setup}s), the points run
 * (every setup at every number of sites and every load), the workload, what is plotted
 * ({@link Panel}s of {@link Curve}s, breakdowns, overlaps), and the study's findings with the rule
 * that decides each from our numbers. {@link ExperimentRunner} runs it; nothing in here runs anything.
 *
 * @param name          command-line name ({@code fig5})
 * @param title         one line: what is compared, where
 * @param study         which figure or section of the study this reproduces
 * @param variant       {@code full} (the study's sizes) or {@code quick} (about five minutes on two cores), or a test's
 * @param matrix        latency preset or file; sites are its first n ({@code none}: sites named site1..n without delays)
 * @param siteCounts    numbers of sites run, ascending
 * @param loads         offered loads in transactions per second (all sites together), ascending
 * @param workload      the synthetic workload's shape
 * @param transactionsPerSite transactions each site's client emulator submits per point (the study: 800)
 * @param warmupFraction share discarded at each end (the study: 10%)
 * @param warmupSeconds before a cluster's first point, this long an unmeasured run at the lowest load (JIT, caches, connections)
 * @param capMs         a point whose median response time exceeds this, or whose backlog implies it (Little's law), is saturated
 * @param panels        what the report and the plots show
 * @param findings      the study's findings, each with its rule
 * @param notes         caveats that the reader needs to judge the comparison
 */
public record Experiment(String name, String title, String study, String variant, String matrix, List<Integer> siteCounts, List<Double> loads,
                         WorkloadSpec workload, int transactionsPerSite, double warmupFraction, double warmupSeconds, double capMs, List<Setup> setups,
                         List<Panel> panels, List<Finding> findings, List<String> notes) {

    public Experiment {
        Objects.requireNonNull(name, "name");
        siteCounts = List.copyOf(new TreeSet<>(siteCounts));
        loads = List.copyOf(new TreeSet<>(loads));
        setups = List.copyOf(setups);
        panels = List.copyOf(panels);
        findings = List.copyOf(findings);
        notes = List.copyOf(notes);
        if (siteCounts.isEmpty() || loads.isEmpty() || setups.isEmpty()) throw new IllegalArgumentException(name + ": needs sites, loads and setups");
        if (siteCounts.get(0) < 1) throw new IllegalArgumentException(name + ": at least one site");
        if (warmupSeconds < 0) throw new IllegalArgumentException(name + ": warm-up seconds must be >= 0");
        if (transactionsPerSite < 10) throw new IllegalArgumentException(name + ": at least 10 transactions per site");
        List<String> ids = setups.stream().map(Setup::id).toList();
        if (new TreeSet<>(ids).size() != ids.size()) throw new IllegalArgumentException(name + ": setup ids must be unique: " + ids);
        for (Setup s : setups)
            if (s.target() == Target.POSTGRES && siteCounts.stream().anyMatch(n -> n != 1))
                throw new IllegalArgumentException(name + ": setup " + s.id() + " is one plain PostgreSQL server, so one site only");
        List<String> labels = new ArrayList<>();
        for (Panel p : panels) {
            for (Curve c : p.curves()) {
                labels.add(c.label());
                if (!ids.contains(c.setup())) throw new IllegalArgumentException(name + ": curve " + c.label() + " names unknown setup " + c.setup());
            }
            if (p instanceof Breakdown b) for (Bar bar : b.bars())
                if (!ids.contains(bar.setup())) throw new IllegalArgumentException(name + ": bar " + bar.label() + " names unknown setup " + bar.setup());
            if (p instanceof Overlap o && !ids.contains(o.setup())) throw new IllegalArgumentException(name + ": overlap names unknown setup " + o.setup());
        }
        if (new TreeSet<>(labels).size() != labels.size()) throw new IllegalArgumentException(name + ": curve labels must be unique: " + labels);
    }

    /** Every point run: setups x site counts x loads. */
    public int points() { return setups.size() * siteCounts.size() * loads.size(); }

    /** Transactions submitted in all, over every point. */
    public long transactions() {
        return (long) setups.size() * loads.size() * siteCounts.stream().mapToLong(n -> (long) n * transactionsPerSite).sum();
    }

    /**
     * About how long the run takes: each point's schedule (n sites x transactions / load) plus a few
     * seconds per point and a cluster start (initdb, group) and warm-up per setup and site count.
     */
    public double estimatedSeconds() {
        double s = 0;
        for (int n : siteCounts) {
            s += setups.size() * (8 + 2.5 * n + warmupSeconds);
            for (double l : loads) s += setups.size() * (n * (double) transactionsPerSite / l + 3);
        }
        return s;
    }

    public Setup setup(String id) {
        return setups.stream().filter(s -> s.id().equals(id)).findFirst().orElseThrow(() -> new IllegalArgumentException(name + ": no setup " + id));
    }

    public Curve curve(String label) {
        for (Panel p : panels) for (Curve c : p.curves()) if (c.label().equals(label)) return c;
        throw new IllegalArgumentException(name + ": no curve " + label);
    }

    public Panel panel(String id) {
        return panels.stream().filter(p -> p.id().equals(id)).findFirst().orElseThrow(() -> new IllegalArgumentException(name + ": no panel " + id));
    }

    // variants: same figure, other sizes

    public Experiment withVariant(String v) { return new Experiment(name, title, study, v, matrix, siteCounts, loads, workload, transactionsPerSite, warmupFraction, warmupSeconds, capMs, setups, panels, findings, notes); }
    public Experiment withLoads(List<Double> l) { return new Experiment(name, title, study, variant, matrix, siteCounts, l, workload, transactionsPerSite, warmupFraction, warmupSeconds, capMs, setups, panels, findings, notes); }
    public Experiment withSiteCounts(List<Integer> n) { return new Experiment(name, title, study, variant, matrix, n, loads, workload, transactionsPerSite, warmupFraction, warmupSeconds, capMs, setups, panels, findings, notes); }
    public Experiment withTransactionsPerSite(int t) { return new Experiment(name, title, study, variant, matrix, siteCounts, loads, workload, t, warmupFraction, warmupSeconds, capMs, setups, panels, findings, notes); }
    public Experiment withWarmupSeconds(double ws) { return new Experiment(name, title, study, variant, matrix, siteCounts, loads, workload, transactionsPerSite, warmupFraction, ws, capMs, setups, panels, findings, notes); }
    public Experiment withWorkload(WorkloadSpec w) { return new Experiment(name, title, study, variant, matrix, siteCounts, loads, w, transactionsPerSite, warmupFraction, warmupSeconds, capMs, setups, panels, findings, notes); }

    /** Where the clients' transactions go. */
    public enum Target {
        /** a wanrep cluster: one PostgreSQL and one proxy per site, clients at every site's proxy */
        WANREP,
        /** one plain PostgreSQL server, clients straight to it (the study's centralized baseline) */
        POSTGRES
    }

    /**
     * One configuration compared in a figure.
     *
     * @param settings  middleware settings ({@code execution}, {@code delivery}, {@code queries}, ...)
     * @param primaries under primary copy: give every table a primary (round robin over the sites, written
     *                  as {@code tables.public.synth_N.primary}) and label updates local or remote write
     */
    public record Setup(String id, String label, Target target, Map<String, String> settings, boolean primaries) {
        public Setup {
            settings = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(settings));
        }

        public static Setup wanrep(String id, String label, Map<String, String> settings) { return new Setup(id, label, Target.WANREP, settings, false); }

        public Setup withPrimaries() { return new Setup(id, label, target, settings, true); }

        public String execution() { return target == Target.POSTGRES ? "none" : settings.getOrDefault("execution", "symmetric"); }
        public String delivery() { return target == Target.POSTGRES ? "none" : settings.getOrDefault("delivery", "safe"); }
        public String queries() { return target == Target.POSTGRES ? "none" : settings.getOrDefault("queries", "snapshot"); }
    }

    /** The study's synthetic workload (section 5.1): 10 tables x 10,000 rows, 50% updates of 10 rows, 50% queries of 10 rows. */
    public record WorkloadSpec(int tables, int rows, double updateFraction, int statements) {
        public static final WorkloadSpec STUDY = new WorkloadSpec(10, 10_000, 0.5, 10);

        public SyntheticWorkload create() { return new SyntheticWorkload(tables, rows, updateFraction, statements); }
    }

    /** The x axis of a line panel. */
    public enum Axis { LOAD, SITES }

    /** Which response-time statistic a curve plots (over the measured, committed transactions). */
    public enum Metric { P50, MEAN, P90 }

    /**
     * One line: the response times of one transaction type under one setup, along the panel's x axis;
     * the other dimension fixed ({@code atSites} for x = load, {@code atLoad} for x = sites; null: the only one run).
     */
    public record Curve(String label, String setup, String type, Integer atSites, Double atLoad) {
        public static Curve vsLoad(String label, String setup, String type) { return new Curve(label, setup, type, null, null); }
        public static Curve vsSites(String label, String setup, String type, double load) { return new Curve(label, setup, type, null, load); }
    }

    /** One bar of a breakdown: a setup's transactions of one type. */
    public record Bar(String label, String setup, String type) {}

    /** What the report and the plots show. */
    public sealed interface Panel {
        String id();
        String title();

        default List<Curve> curves() { return List.of(); }
    }

    /** Response time (metric) against load or number of sites, one line per curve. */
    public record Lines(String id, String title, Axis x, Metric metric, List<Curve> curves) implements Panel {
        public Lines { curves = List.copyOf(curves); }
    }

    /**
     * The study's Fig. 3b: where each bar's mean response time goes at a few loads, from the
     * middleware's phases (delivery, lock wait, write-set wait, execution, commit) and the rest
     * (the proxy, client communication, waiting for a connection).
     */
    public record Breakdown(String id, String title, List<Double> loads, List<Bar> bars) implements Panel {
        public Breakdown { loads = List.copyOf(loads); bars = List.copyOf(bars); }
    }

    /**
     * The study's Fig. 5b: under opt-safe delivery, how much of the execution overlapped the wait for
     * the final delivery, per load.
     */
    public record Overlap(String id, String title, String setup) implements Panel {}

    /** Delivery times (middleware phase {@code delivery}, and {@code optimistic_delivery} where there is one) against load, per setup. */
    public record Deliveries(String id, String title, List<String> setups) implements Panel {
        public Deliveries { setups = List.copyOf(setups); }
    }
}
