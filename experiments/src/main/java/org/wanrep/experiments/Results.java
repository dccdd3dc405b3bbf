package org.wanrep.experiments;

import org.wanrep.experiments.Experiment.Axis;
import org.wanrep.experiments.Experiment.Curve;
import org.wanrep.experiments.Experiment.Lines;
import org.wanrep.experiments.Experiment.Metric;
import org.wanrep.experiments.Experiment.Panel;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What a run of an experiment measured: one {@link Row} per point and transaction type, the
 * middleware's phases per point and site, and a replica check per cluster. Everything the report,
 * the plots and the findings need is derived from these rows.
 */
public record Results(Experiment experiment, String startedAt, double seconds, List<Row> rows, List<PhaseRow> phases, List<Check> checks) {

    public Results {
        rows = List.copyOf(rows);
        phases = List.copyOf(phases);
        checks = List.copyOf(checks);
    }

    /** How a point ended. */
    public enum Status {
        /** ran, throughput kept up with the offered load */
        OK,
        /** ran (or was stopped) and did not keep up: backlog, median above the cap, or throughput short of the load */
        SATURATED,
        /** not run: the same setup saturated at a lower load, or its cluster was still busy */
        SKIPPED,
        /** not run: the setup could not start (e.g. a policy not available in this build) */
        NOT_RUN,
        /** ran, twice, but other processes on this machine took much of its CPU both times: left out of the findings */
        DISTURBED;

        public boolean saturated() { return this == SATURATED || this == SKIPPED; }
    }

    /**
     * One point (setup, sites, load) and one transaction type ({@code all} for every type), over the
     * measured transactions of every site. Times in ms from each transaction's due time; NaN when not
     * run. {@code otherCores}: how many cores other processes on this machine kept busy on average
     * while the point ran (NaN when unknown).
     */
    public record Row(String setup, int sites, double load, String type, Status status, long measured, long committed, long aborts, long retries,
                      double throughputTps, double meanMs, double p50Ms, double p90Ms, double p99Ms, double maxMs, double otherCores, String note) {
        public boolean ok() { return status == Status.OK; }

        public double metric(Metric m) {
            return switch (m) {
                case P50 -> p50Ms;
                case MEAN -> meanMs;
                case P90 -> p90Ms;
            };
        }

        static Row notRun(String setup, int sites, double load, String type, Status status, String note) {
            return new Row(setup, sites, load, type, status, 0, 0, 0, 0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, note);
        }
    }

    /** One middleware phase of the updates one site originated, over a point's measured window. */
    public record PhaseRow(String setup, int sites, double load, String site, String phase, long count, double meanMs, double p50Ms, double p99Ms) {}

    /** The replica check at the end of one cluster: {@code same}, or what differed, or why there was none. */
    public record Check(String setup, int sites, String verdict) {
        public boolean same() { return verdict.startsWith("same"); }
    }

    public Optional<Row> row(String setup, int sites, double load, String type) {
        return rows.stream().filter(r -> r.setup.equals(setup) && r.sites == sites && r.load == load && r.type.equals(type)).findFirst();
    }

    /** Whether a point ran and kept up (judged on all its transaction types together). */
    public boolean ok(String setup, int sites, double load) {
        return row(setup, sites, load, "all").map(Row::ok).orElse(false);
    }

    public List<PhaseRow> phases(String setup, int sites, double load) {
        return phases.stream().filter(p -> p.setup.equals(setup) && p.sites == sites && p.load == load).toList();
    }

    /** The x axis of a curve's panel, and its metric. */
    public Lines panelOf(String curveLabel) {
        for (Panel p : experiment.panels())
            if (p instanceof Lines l && l.curves().stream().anyMatch(c -> c.label().equals(curveLabel))) return l;
        throw new IllegalArgumentException(experiment.name() + ": curve " + curveLabel + " is in no line panel");
    }

    /** A curve's values at the x where its point ran and kept up (x = load in tps, or number of sites). */
    public TreeMap<Double, Double> values(String curveLabel) {
        Lines l = panelOf(curveLabel);
        Curve c = experiment.curve(curveLabel);
        TreeMap<Double, Double> v = new TreeMap<>();
        for (Point p : points(c, l.x()))
            row(c.setup(), p.sites, p.load, c.type()).filter(r -> r.ok() && ok(c.setup(), p.sites, p.load) && r.committed() > 0)
                    .ifPresent(r -> v.put(p.x, r.metric(l.metric())));
        return v;
    }

    /** The x at which a curve's point saturated or was skipped for it. */
    public List<Double> saturatedAt(String curveLabel) {
        Lines l = panelOf(curveLabel);
        Curve c = experiment.curve(curveLabel);
        List<Double> xs = new ArrayList<>();
        for (Point p : points(c, l.x()))
            row(c.setup(), p.sites, p.load, "all").filter(r -> r.status().saturated()).ifPresent(r -> xs.add(p.x));
        return xs;
    }

    /** Whether any point of the curve ran at all (its setup started). */
    public boolean ran(String curveLabel) {
        Lines l = panelOf(curveLabel);
        Curve c = experiment.curve(curveLabel);
        return points(c, l.x()).stream().anyMatch(p -> row(c.setup(), p.sites, p.load, "all").map(r -> r.status() != Status.NOT_RUN).orElse(false));
    }

    /** Why a curve's setup did not run, if it did not. */
    public Optional<String> notRunReason(String curveLabel) { return setupNotRunReason(experiment.curve(curveLabel).setup()); }

    /** Whether any point of a setup ran at all. */
    public boolean setupRan(String setup) { return rows.stream().anyMatch(r -> r.setup.equals(setup) && r.status != Status.NOT_RUN); }

    public Optional<String> setupNotRunReason(String setup) {
        return rows.stream().filter(r -> r.setup.equals(setup) && r.status == Status.NOT_RUN).map(Row::note).findFirst();
    }

    private record Point(double x, int sites, double load) {}

    private List<Point> points(Curve c, Axis x) {
        List<Point> ps = new ArrayList<>();
        if (x == Axis.LOAD) {
            int n = c.atSites() != null ? c.atSites() : experiment.siteCounts().get(experiment.siteCounts().size() - 1);
            for (double l : experiment.loads()) ps.add(new Point(l, n, l));
        } else {
            double l = c.atLoad() != null ? c.atLoad() : experiment.loads().get(0);
            for (int n : experiment.siteCounts()) ps.add(new Point(n, n, l));
        }
        return ps;
    }
}
