package org.wanrep.experiments;

import org.wanrep.experiments.Experiment.Axis;
import org.wanrep.experiments.Experiment.Bar;
import org.wanrep.experiments.Experiment.Breakdown;
import org.wanrep.experiments.Experiment.Curve;
import org.wanrep.experiments.Experiment.Deliveries;
import org.wanrep.experiments.Experiment.Lines;
import org.wanrep.experiments.Experiment.Metric;
import org.wanrep.experiments.Experiment.Overlap;
import org.wanrep.experiments.Experiment.Panel;
import org.wanrep.experiments.Experiment.Setup;
import org.wanrep.experiments.Experiment.Target;
import org.wanrep.experiments.Experiment.WorkloadSpec;
import org.wanrep.experiments.Finding.Direction;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The study's figures (section 5), one definition each, in a full variant (the study's sizes: 800
 * transactions per site and point, the study's loads and beyond until saturation) and a quick one
 * (fewer loads and transactions: about five minutes each on two cores). The findings are the
 * study's own statements (section 5 and FACTS.md), each with the rule that decides ours.
 */
public final class Experiments {
    private Experiments() {}

    public static final int STUDY_TRANSACTIONS = 800;
    public static final double STUDY_WARMUP = 0.1;
    /** An unmeasured run before each cluster's first point: the first point would otherwise pay for a cold JIT and cold connections. */
    public static final double WARMUP_SECONDS = 10;
    /** A median above this (or a backlog implying it) is saturation; the study still showed 7 s points in Fig. 6. */
    public static final double CAP_MS = 10_000;

    private record Sizes(String variant, List<Double> loads, List<Integer> sites, int transactions) {}

    private static final Map<String, Function<Boolean, Experiment>> ALL = new LinkedHashMap<>();
    static {
        ALL.put("centralized", q -> centralized(q ? new Sizes("quick", List.of(20.0, 40.0, 80.0, 160.0, 320.0, 640.0), List.of(1), 400)
                : new Sizes("full", List.of(10.0, 20.0, 40.0, 60.0, 80.0, 120.0, 160.0, 240.0, 320.0, 480.0, 640.0), List.of(1), STUDY_TRANSACTIONS)));
        ALL.put("lan", q -> lan(q ? new Sizes("quick", List.of(50.0, 100.0, 200.0, 400.0), List.of(4), 200)
                : new Sizes("full", List.of(25.0, 50.0, 100.0, 150.0, 200.0, 300.0, 400.0), List.of(4), STUDY_TRANSACTIONS)));
        ALL.put("fig3", q -> fig3(q ? new Sizes("quick", List.of(20.0, 40.0), List.of(4), 200)
                : new Sizes("full", List.of(10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 80.0, 100.0), List.of(4), STUDY_TRANSACTIONS)));
        ALL.put("fig4", q -> fig4(q ? new Sizes("quick", List.of(20.0, 40.0), List.of(4), 160)
                : new Sizes("full", List.of(10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 80.0), List.of(4), STUDY_TRANSACTIONS)));
        ALL.put("fig5", q -> fig5(q ? new Sizes("quick", List.of(20.0, 60.0, 120.0), List.of(4), 200)
                : new Sizes("full", List.of(10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 80.0, 100.0, 120.0, 150.0), List.of(4), STUDY_TRANSACTIONS)));
        ALL.put("fig6", q -> fig6(q ? new Sizes("quick", List.of(20.0, 60.0), List.of(2, 4, 8), 120)
                : new Sizes("full", List.of(20.0, 40.0, 60.0, 80.0), List.of(2, 4, 6, 8), STUDY_TRANSACTIONS)));
        ALL.put("fig7", q -> fig7(q ? new Sizes("quick", List.of(20.0, 60.0), List.of(2, 4, 8), 120)
                : new Sizes("full", List.of(20.0, 40.0, 60.0, 80.0), List.of(2, 4, 6, 8), STUDY_TRANSACTIONS)));
    }

    /** Names in the order {@code run all} runs them: baselines first, then the figures. */
    public static List<String> names() { return List.copyOf(ALL.keySet()); }

    public static Experiment get(String name, boolean quick) {
        Function<Boolean, Experiment> f = ALL.get(name);
        if (f == null) throw new IllegalArgumentException("unknown experiment '" + name + "'; one of " + names() + " or all");
        return f.apply(quick);
    }

    public static List<Experiment> all(boolean quick) { return names().stream().map(n -> get(n, quick)).toList(); }

    // ------------------------------------------------------------------ definitions

    private static Map<String, String> settings(String execution, String delivery, String queries) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("execution", execution);
        m.put("delivery", delivery);
        m.put("queries", queries);
        return m;
    }

    private static Experiment make(String name, String title, String study, Sizes z, String matrix, List<Setup> setups, List<Panel> panels,
                                   List<Finding> findings, List<String> notes) {
        return new Experiment(name, title, study, z.variant(), matrix, z.sites(), z.loads(), WorkloadSpec.STUDY, z.transactions(), STUDY_WARMUP, WARMUP_SECONDS, CAP_MS,
                setups, panels, findings, notes);
    }

    private static final String WRITE_SETS = "Primary copy and local copy need write-set execution in the middleware; a build without it records "
            + "those setups as not run and their findings as inconclusive.";
    private static final String SHARED_CORES = "All sites run in one process on this machine and share its cores: adding sites adds work (another "
            + "PostgreSQL applying or executing every update) instead of CPU, unlike the study's PlanetLab machines. Figures that rest on "
            + "more sites bringing more CPU (query times falling with more sites) cannot show that effect here; run them across hosts (deploy/).";
    private static final String HARDWARE = "The study's sites were 2.4 GHz Pentium 4 machines with PostgreSQL 7.2 and Spread; absolute response "
            + "times and saturation loads are not expected to match, the shapes and orderings are what is compared.";

    static Experiment centralized(Sizes z) {
        List<Setup> setups = List.of(
                new Setup("postgres", "PostgreSQL alone", Target.POSTGRES, Map.of(), false),
                Setup.wanrep("wanrep-1", "one wanrep site", settings("symmetric", "agreed", "snapshot")));
        Lines l = new Lines("centralized", "Centralized: one database, clients on the same machine", Axis.LOAD, Metric.P50, List.of(
                Curve.vsLoad("postgres update", "postgres", "update"), Curve.vsLoad("postgres query", "postgres", "query"),
                Curve.vsLoad("wanrep-1 update", "wanrep-1", "update"), Curve.vsLoad("wanrep-1 query", "wanrep-1", "query")));
        List<Finding> f = List.of(
                new Finding.Below("with local clients a single database answers within 25 ms up to about 40 tps",
                        List.of("postgres update", "postgres query"), 25, 40.0),
                new Finding.SaturatesBetween("a single database saturates close to 40 tps", "postgres update", 30, 50));
        return make("centralized", "centralized baseline: PostgreSQL alone, and one wanrep site in front of it", "section 5.2 (centralized database)", z, "none",
                setups, List.of(l), f, List.of(HARDWARE, "The study ran clients directly against the database; `wanrep-1` adds our proxy and a one-member group, "
                        + "to show what the middleware alone costs."));
    }

    static Experiment lan(Sizes z) {
        List<Setup> setups = List.of(
                Setup.wanrep("agreed", "symmetric, agreed", settings("symmetric", "agreed", "snapshot")),
                Setup.wanrep("safe", "symmetric, safe", settings("symmetric", "safe", "snapshot")));
        Lines l = new Lines("lan", "LAN: 4 sites, 0.1 ms links", Axis.LOAD, Metric.P50, List.of(
                Curve.vsLoad("agreed update", "agreed", "update"), Curve.vsLoad("agreed query", "agreed", "query"),
                Curve.vsLoad("safe update", "safe", "update"), Curve.vsLoad("safe query", "safe", "query")));
        List<Finding> f = List.of(
                new Finding.Sustains("in a LAN, 4 sites reach a throughput of far over 100 tps", List.of("agreed update", "safe update"), 150),
                new Finding.SlowGrowth("in a LAN, update response times start low (25 ms) and increase only slowly with the load",
                        List.of("agreed update", "safe update"), 2, 25, 100.0));
        return make("lan", "LAN baseline: 4 sites without WAN delays, symmetric execution", "section 5.2 (replication in a LAN)", z, "lan", setups, List.of(l), f,
                List.of(HARDWARE, "The study's LAN machines were faster (3 GHz) than its WAN ones. \"Far over 100 tps\" is read as keeping up at 150 tps or more; "
                        + "\"slowly\" as at most doubling (or +25 ms, the study's starting level) up to 100 tps.", SHARED_CORES));
    }

    static Experiment fig3(Sizes z) {
        List<Setup> setups = List.of(
                Setup.wanrep("sym", "(a) symmetric", settings("symmetric", "agreed", "snapshot")),
                Setup.wanrep("pc", "(b) primary copy", settings("primary-copy", "agreed", "snapshot")).withPrimaries(),
                Setup.wanrep("lc", "(c) local copy", settings("local-copy", "agreed", "snapshot")));
        Lines a = new Lines("fig3a", "Fig. 3a: update response time by write-set option, 4 sites (na4), agreed delivery", Axis.LOAD, Metric.P50, List.of(
                Curve.vsLoad("symmetric", "sym", "update"), Curve.vsLoad("primary copy LW", "pc", "update-lw"),
                Curve.vsLoad("local copy", "lc", "update"), Curve.vsLoad("primary copy RW", "pc", "update-rw")));
        List<Double> bl = z.loads().contains(20.0) && z.loads().contains(40.0) ? List.of(20.0, 40.0) : z.loads().subList(0, Math.min(2, z.loads().size()));
        Breakdown b = new Breakdown("fig3b", "Fig. 3b: where an update's time goes at " + String.join(" and ", bl.stream().map(Finding::num).toList()) + " tps", bl, List.of(
                new Bar("(a)", "sym", "update"), new Bar("(b)LW", "pc", "update-lw"), new Bar("(b)RW", "pc", "update-rw"), new Bar("(c)", "lc", "update")));
        List<Finding> f = List.of(
                new Finding.Ordered("the symmetric approach has the best response time throughout; primary-copy local writes are next, then local copy; "
                        + "primary-copy remote writes are worst", List.of("symmetric", "primary copy LW", "local copy", "primary copy RW"), false),
                new Finding.Below("response times stay between 100 and 800 ms up to a load of around 50 tps",
                        List.of("symmetric", "primary copy LW", "local copy", "primary copy RW"), 800, 50.0),
                new Finding.HighestLoad("higher loads (up to 60 tps) are reached with the symmetric approach", "symmetric",
                        List.of("primary copy LW", "local copy", "primary copy RW")),
                new Finding.PartShare("3b: with symmetric execution the one message makes most of the response time", "fig3b", List.of("(a)"), "delivery", 0.5, 1.0),
                new Finding.PartShare("3b: the execution itself is very fast (in all approaches)", "fig3b", List.of("(a)", "(b)LW", "(b)RW", "(c)"), "execution", 0, 0.2),
                new Finding.PhaseShorter("3b: local writes of primary copy are slower than symmetric because the transaction message takes longer: the group "
                        + "carries twice the messages", "sym", "delivery", "pc", "delivery"),
                new Finding.PartAtLeast("3b: remote writes of primary copy wait for the write set", "fig3b", "(b)RW", "writeset_wait", 5),
                new Finding.BarsGrow("3b: from 20 to 40 tps all times increase", "fig3b"),
                new Finding.Nearer("3b: local copy is close to primary-copy local writes at 20 tps and closer to remote writes at 40 tps (more conflicts wait "
                        + "for a write set)", "fig3b", "(c)", "(b)LW", "(b)RW", List.of("(b)LW", "(b)RW")));
        return make("fig3", "write-set options: symmetric vs primary copy (local and remote writes) vs local copy", "Fig. 3a/3b (section 5.3)", z, "na4", setups,
                List.of(a, b), f, List.of(WRITE_SETS, "Primary copy: table synth_i's primary is site (i-1) mod n; an update runs at the primary of its first "
                        + "written table in name order (the middleware's rule), so on 4 sites about a quarter of the updates are local writes (LW), as in the "
                        + "study. With random tables that rule sends about 65% of all updates to synth_1's primary (synth_1 is among an update's 10 random "
                        + "tables 65% of the time); the study does not say how it assigned multi-table transactions.", HARDWARE));
    }

    static Experiment fig4(Sizes z) {
        List<Setup> setups = List.of(
                Setup.wanrep("sym-snapshot", "symmetric, snapshot queries", settings("symmetric", "agreed", "snapshot")),
                Setup.wanrep("sym-locked", "symmetric, queries under middleware locks (nosnapshot)", settings("symmetric", "agreed", "locked")),
                Setup.wanrep("lc-snapshot", "local copy, snapshot queries", settings("local-copy", "agreed", "snapshot")),
                Setup.wanrep("lc-locked", "local copy, queries under middleware locks (nosnapshot)", settings("local-copy", "agreed", "locked")));
        Lines a = new Lines("fig4a", "Fig. 4a: symmetric, snapshot vs locked queries, 4 sites (na4), agreed", Axis.LOAD, Metric.P50, List.of(
                Curve.vsLoad("sym update snapshot", "sym-snapshot", "update"), Curve.vsLoad("sym query snapshot", "sym-snapshot", "query"),
                Curve.vsLoad("sym update locked", "sym-locked", "update"), Curve.vsLoad("sym query locked", "sym-locked", "query")));
        Lines b = new Lines("fig4b", "Fig. 4b: local copy, snapshot vs locked queries, 4 sites (na4), agreed", Axis.LOAD, Metric.P50, List.of(
                Curve.vsLoad("lc update snapshot", "lc-snapshot", "update"), Curve.vsLoad("lc query snapshot", "lc-snapshot", "query"),
                Curve.vsLoad("lc update locked", "lc-locked", "update"), Curve.vsLoad("lc query locked", "lc-locked", "query")));
        double medium = 40;   // the study: the difference grows once update response times rise, at around 50 tps
        List<Finding> f = List.of(
                new Finding.SmallGap("symmetric: locking queries at the middleware makes only a very small difference for queries at small to medium loads",
                        "sym query locked", "sym query snapshot", 10, 0.25, medium),
                new Finding.SmallGap("symmetric: nor does it slow the updates much at small to medium loads", "sym update locked", "sym update snapshot", 10, 0.25, medium),
                new Finding.LargerGap("local copy: snapshots for queries are significantly better than locking, far more than with symmetric execution (queries)",
                        "sym query locked", "sym query snapshot", "lc query locked", "lc query snapshot"),
                new Finding.LargerGap("local copy: queries under locks hinder the updates ordered behind them, and the system deteriorates fast (updates)",
                        "sym update locked", "sym update snapshot", "lc update locked", "lc update snapshot"));
        return make("fig4", "snapshot vs locked (\"nosnapshot\") queries, symmetric and local copy", "Fig. 4a/4b (section 5.4)", z, "na4", setups, List.of(a, b), f,
                List.of(WRITE_SETS, "\"Small\" is read as within 10 ms or 25%, whichever is larger, up to the middle load run (" + Finding.num(medium) + " tps).",
                        HARDWARE));
    }

    static Experiment fig5(Sizes z) {
        List<Setup> setups = List.of(
                Setup.wanrep("agreed", "agreed", settings("symmetric", "agreed", "snapshot")),
                Setup.wanrep("safe", "safe", settings("symmetric", "safe", "snapshot")),
                Setup.wanrep("opt-safe", "opt-safe", settings("symmetric", "opt-safe", "snapshot")));
        Lines a = new Lines("fig5a", "Fig. 5a: update response time by delivery guarantee, symmetric, 4 sites (na4)", Axis.LOAD, Metric.P50, List.of(
                Curve.vsLoad("agreed", "agreed", "update"), Curve.vsLoad("safe", "safe", "update"), Curve.vsLoad("opt-safe", "opt-safe", "update")));
        Deliveries d = new Deliveries("fig5a-delivery", "Fig. 5a (bars): delivery times at the origin", List.of("agreed", "safe", "opt-safe"));
        Overlap o = new Overlap("fig5b", "Fig. 5b: opt-safe, execution overlapped with the ordering", "opt-safe");
        List<Finding> f = List.of(
                new Finding.Ordered("agreed performs better than opt-safe throughout", List.of("agreed", "opt-safe"), false),
                new Finding.Ordered("opt-safe performs slightly better than safe (the difference is very small: execution is short next to the safe delay)",
                        List.of("opt-safe", "safe"), true),
                new Finding.Below("all results are well below 1 second, even for safe delivery", List.of("agreed", "safe", "opt-safe"), 1000, 60.0),
                new Finding.Trend("delivery delays and response times increase with the load (CPU and lock contention)", List.of("agreed", "safe", "opt-safe"),
                        Direction.GROWS),
                new Finding.PhaseShorter("with Spread's token the optimistic delivery took as long as agreed delivery; a sequencer-based total order should "
                        + "deliver optimistically much earlier", "opt-safe", "optimistic_delivery", "agreed", "delivery"),
                new Finding.OverlapAtLowLoad("5b: at low load execution overlaps completely with the ordering", "fig5b", 0.9),
                new Finding.OverlapShrinks("5b: with increasing load less and less of the execution overlaps (transactions queue on the table locks)", "fig5b", 0.1));
        return make("fig5", "the cost of atomicity: agreed vs safe vs opt-safe delivery, and the opt-safe overlap", "Fig. 5a/5b (sections 5.5-5.6)", z, "na4",
                setups, List.of(a, d, o), f, List.of(HARDWARE, "Loads beyond the study's 60 tps are run (until saturation) because the opt-safe overlap "
                        + "only shrinks once transactions queue on table locks, which happens at higher loads here than on the study's machines."));
    }

    static Experiment fig6(Sizes z) {
        Setup pc = Setup.wanrep("pc", "primary copy, opt-safe", settings("primary-copy", "opt-safe", "snapshot")).withPrimaries();
        List<Curve> q = new ArrayList<>(), lw = new ArrayList<>(), rw = new ArrayList<>();
        for (double l : z.loads()) {
            q.add(Curve.vsSites("query " + Finding.num(l) + " tps", "pc", "query", l));
            lw.add(Curve.vsSites("local update " + Finding.num(l) + " tps", "pc", "update-lw", l));
            rw.add(Curve.vsSites("remote update " + Finding.num(l) + " tps", "pc", "update-rw", l));
        }
        List<Finding> f = new ArrayList<>(List.of(
                new Finding.Trend("6a: for all loads the query response time decreases as sites are added (each site gets fewer queries)",
                        q.stream().map(Curve::label).toList(), Direction.FALLS)));
        List<String> low = z.loads().stream().filter(l -> l <= 40).map(l -> "local update " + Finding.num(l) + " tps").toList();
        if (!low.isEmpty())
            f.add(new Finding.Trend("6b: at low loads (20/40 tps) local-update response times increase slowly but steadily with the number of sites "
                    + "(message delay)", low, Direction.GROWS));
        if (z.loads().contains(60.0) && z.sites().containsAll(List.of(2, 4, 8)))
            f.add(new Finding.Dip("6b: at 60 tps local updates get faster from 2 to 4 sites (load spread over more CPUs) and slower again at 8 "
                    + "(communication delay dominates)", "local update 60 tps", 2, 4, 8));
        if (z.loads().contains(80.0) && z.sites().contains(2))
            f.add(new Finding.SaturatedOnlyAt("6b: two replicas cannot handle 80 tps, more replicas can", "local update 80 tps", List.of(2.0)));
        return make("fig6", "scalability with primary copy and opt-safe delivery: 2 to 8 sites", "Fig. 6a/6b (section 5.7)", z, "na8", List.of(pc),
                List.of(new Lines("fig6a", "Fig. 6a: query response time vs sites, primary copy, opt-safe (na8)", Axis.SITES, Metric.P50, q),
                        new Lines("fig6b", "Fig. 6b: local-update response time vs sites, primary copy, opt-safe (na8)", Axis.SITES, Metric.P50, lw),
                        new Lines("fig6-rw", "Remote-update response time vs sites (ours; not in the study)", Axis.SITES, Metric.P50, rw)),
                f, List.of(WRITE_SETS, "The study's text runs this suite with primary copy and opt-safe delivery and plots local updates; its caption "
                        + "says local copy. We follow the text.", SHARED_CORES, "Sites are the first n of na8 (montreal, toronto, boston, newyork, "
                        + "chicago, atlanta, austin, berkeley): more sites also means longer links, as on PlanetLab.", HARDWARE));
    }

    static Experiment fig7(Sizes z) {
        Setup sym = Setup.wanrep("sym", "symmetric, agreed", settings("symmetric", "agreed", "snapshot"));
        List<Curve> q = new ArrayList<>(), u = new ArrayList<>();
        for (double l : z.loads()) {
            q.add(Curve.vsSites("query " + Finding.num(l) + " tps", "sym", "query", l));
            u.add(Curve.vsSites("update " + Finding.num(l) + " tps", "sym", "update", l));
        }
        List<Finding> f = List.of(
                new Finding.Trend("7a: query response times decrease with the number of sites (less than with primary copy: every site executes every update)",
                        q.stream().map(Curve::label).toList(), Direction.FALLS),
                new Finding.Trend("7b: update response times grow with the number of sites (message delay)", u.stream().map(Curve::label).toList(), Direction.GROWS));
        return make("fig7", "scalability with symmetric execution and agreed delivery: 2 to 8 sites", "Fig. 7a/7b (section 5.7)", z, "na8", List.of(sym),
                List.of(new Lines("fig7a", "Fig. 7a: query response time vs sites, symmetric, agreed (na8)", Axis.SITES, Metric.P50, q),
                        new Lines("fig7b", "Fig. 7b: update response time vs sites, symmetric, agreed (na8)", Axis.SITES, Metric.P50, u)),
                f, List.of(SHARED_CORES, "Sites are the first n of na8: more sites also means longer links.", HARDWARE));
    }
}
