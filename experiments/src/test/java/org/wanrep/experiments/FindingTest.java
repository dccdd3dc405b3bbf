package org.wanrep.experiments;

import org.junit.jupiter.api.Test;
import org.wanrep.experiments.Experiment.Axis;
import org.wanrep.experiments.Experiment.Bar;
import org.wanrep.experiments.Experiment.Breakdown;
import org.wanrep.experiments.Experiment.Curve;
import org.wanrep.experiments.Experiment.Lines;
import org.wanrep.experiments.Experiment.Metric;
import org.wanrep.experiments.Experiment.Overlap;
import org.wanrep.experiments.Experiment.Setup;
import org.wanrep.experiments.Finding.Direction;
import org.wanrep.experiments.Finding.Verdict;
import org.wanrep.experiments.Results.Status;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The finding rules on made-up numbers: each verdict follows from the numbers, ties and saturation as documented. */
class FindingTest {
    static final List<Double> LOADS = List.of(10.0, 20.0, 30.0);

    /** Setups a, b, c on 4 sites; curves A, B, C (their updates) against load; a breakdown of a and c; c's overlap. */
    static Experiment experiment(List<Integer> sites) {
        List<Setup> setups = List.of(Setup.wanrep("a", "a", Map.of()), Setup.wanrep("b", "b", Map.of()), Setup.wanrep("c", "c", Map.of()));
        List<Experiment.Panel> panels = new ArrayList<>(List.of(
                new Lines("lines", "lines", Axis.LOAD, Metric.P50, List.of(Curve.vsLoad("A", "a", "update"), Curve.vsLoad("B", "b", "update"),
                        Curve.vsLoad("C", "c", "update"), Curve.vsLoad("Aq", "a", "query"), Curve.vsLoad("Cq", "c", "query"))),
                new Breakdown("bd", "bd", List.of(10.0, 20.0), List.of(new Bar("a", "a", "update"), new Bar("lw", "b", "update-lw"),
                        new Bar("rw", "b", "update-rw"), new Bar("c", "c", "update"))),
                new Overlap("ov", "ov", "c")));
        if (sites.size() > 1)
            panels.add(new Lines("bysites", "by sites", Axis.SITES, Metric.P50, List.of(Curve.vsSites("A10", "a", "update", 10), Curve.vsSites("A20", "a", "update", 20))));
        return new Experiment("t", "t", "test", "test", "na4", sites, LOADS, Experiment.WorkloadSpec.STUDY, 100, 0.1, 0, 10_000, setups, panels, List.of(), List.of());
    }

    static final class Data {
        final Experiment e;
        final List<Results.Row> rows = new ArrayList<>();
        final List<Results.PhaseRow> phases = new ArrayList<>();

        Data() { this(List.of(4)); }
        Data(List<Integer> sites) { e = experiment(sites); }

        /** A point that kept up: type -> median (and mean, the same). */
        Data okAt(String setup, int sites, double load, Object... typeAndMs) {
            rows.add(row(setup, sites, load, "all", Status.OK, 1));
            for (int i = 0; i < typeAndMs.length; i += 2)
                rows.add(row(setup, sites, load, (String) typeAndMs[i], Status.OK, ((Number) typeAndMs[i + 1]).doubleValue()));
            return this;
        }

        Data ok(String setup, double load, Object... typeAndMs) { return okAt(setup, 4, load, typeAndMs); }

        Data saturated(String setup, int sites, double load) {
            rows.add(row(setup, sites, load, "all", Status.SATURATED, 1));
            rows.add(row(setup, sites, load, "update", Status.SATURATED, 20_000));
            return this;
        }

        Data notRun(String setup) {
            for (double l : LOADS) rows.add(Results.Row.notRun(setup, 4, l, "all", Status.NOT_RUN, "not run: no write sets"));
            return this;
        }

        Data phase(String setup, double load, String site, String phase, long count, double mean) {
            phases.add(new Results.PhaseRow(setup, 4, load, site, phase, count, mean, mean, mean));
            return this;
        }

        Results results() { return new Results(e, "now", 1, rows, phases, List.of()); }

        private static Results.Row row(String setup, int sites, double load, String type, Status st, double ms) {
            return new Results.Row(setup, sites, load, type, st, 100, 100, 0, 0, load, ms, ms, ms, ms, ms, 0, "");
        }
    }

    static Verdict verdict(Finding f, Results r) {
        Finding.Evaluation ev = f.evaluate(r);
        System.out.println(f.getClass().getSimpleName() + ": " + ev.verdict().label() + " / " + ev.ours());
        return ev.verdict();
    }

    @Test void orderedAgreesWhenInOrderEverywhereDiffersWhenReversedMostlyAndTreatsTiesAsDocumented() {
        Data d = new Data().ok("a", 10, "update", 40).ok("b", 10, "update", 60).ok("c", 10, "update", 90)
                .ok("a", 20, "update", 45).ok("b", 20, "update", 70).ok("c", 20, "update", 120)
                .ok("a", 30, "update", 50).ok("b", 30, "update", 51).ok("c", 30, "update", 200);   // b ties a at 30 (within 5%)
        Results r = d.results();
        assertThat(verdict(new Finding.Ordered("s", List.of("A", "B", "C"), false), r)).isEqualTo(Verdict.AGREES);   // 2 confirm, 1 undecided
        assertThat(verdict(new Finding.Ordered("s", List.of("A", "B", "C"), true), r)).isEqualTo(Verdict.AGREES);
        assertThat(verdict(new Finding.Ordered("s", List.of("C", "B", "A"), false), r)).isEqualTo(Verdict.DIFFERS);
        assertThat(verdict(new Finding.Ordered("s", List.of("B", "A"), true), r)).isEqualTo(Verdict.DIFFERS);   // reversed at 10, 20; tie at 30

        // one reversal among confirmations: inconclusive, never agrees
        Results mixed = new Data().ok("a", 10, "update", 40).ok("b", 10, "update", 60).ok("a", 20, "update", 80).ok("b", 20, "update", 60)
                .ok("a", 30, "update", 40).ok("b", 30, "update", 60).results();
        assertThat(verdict(new Finding.Ordered("s", List.of("A", "B"), false), mixed)).isEqualTo(Verdict.INCONCLUSIVE);
        // every point a tie: undecided unless ties count as in order
        Results ties = new Data().ok("a", 10, "update", 100).ok("b", 10, "update", 102).results();
        assertThat(verdict(new Finding.Ordered("s", List.of("A", "B"), false), ties)).isEqualTo(Verdict.INCONCLUSIVE);
        assertThat(verdict(new Finding.Ordered("s", List.of("A", "B"), true), ties)).isEqualTo(Verdict.AGREES);
        assertThat(Finding.tolerance(100, 102)).isEqualTo(5.0);
        assertThat(Finding.tolerance(3, 3.5)).isEqualTo(1.0);
    }

    @Test void aSetupThatDidNotRunMakesItsFindingsInconclusiveAndSaturatedPointsDoNotCount() {
        Results r = new Data().ok("a", 10, "update", 40).ok("a", 20, "update", 50).notRun("b").results();
        Finding.Evaluation ev = new Finding.Ordered("s", List.of("A", "B"), false).evaluate(r);
        assertThat(ev.verdict()).isEqualTo(Verdict.INCONCLUSIVE);
        assertThat(ev.ours()).contains("not measured: B (not run: no write sets)");

        // a point disturbed by other work on the machine is neither a value nor a saturation
        Data dist = new Data().ok("a", 10, "update", 40).ok("a", 20, "update", 50);
        dist.rows.replaceAll(x -> x.load() == 20 ? new Results.Row(x.setup(), x.sites(), x.load(), x.type(), Status.DISTURBED, 1, 1, 0, 0, 1, 9, 9, 9, 9, 9, 1.5, "disturbed") : x);
        assertThat(dist.results().values("A")).containsOnlyKeys(10.0);
        assertThat(dist.results().saturatedAt("A")).isEmpty();

        Results sat = new Data().ok("a", 10, "update", 40).ok("b", 10, "update", 60).ok("a", 20, "update", 50).saturated("b", 4, 20).results();
        assertThat(sat.values("B")).containsOnlyKeys(10.0);
        assertThat(sat.saturatedAt("B")).containsExactly(20.0);
        assertThat(verdict(new Finding.Ordered("s", List.of("A", "B"), false), sat)).isEqualTo(Verdict.AGREES);
    }

    @Test void trendBelowSlowGrowthAndSmallGap() {
        Results r = new Data().ok("a", 10, "update", 40, "query", 10).ok("a", 20, "update", 45, "query", 8).ok("a", 30, "update", 60, "query", 5)
                .ok("c", 10, "update", 40, "query", 10).ok("c", 20, "update", 40.5, "query", 30).ok("c", 30, "update", 41, "query", 90).results();
        assertThat(verdict(new Finding.Trend("s", List.of("A"), Direction.GROWS), r)).isEqualTo(Verdict.AGREES);
        assertThat(verdict(new Finding.Trend("s", List.of("C"), Direction.GROWS), r)).isEqualTo(Verdict.DIFFERS);   // flat within the tie
        assertThat(verdict(new Finding.Trend("s", List.of("A", "C"), Direction.GROWS), r)).isEqualTo(Verdict.INCONCLUSIVE);
        assertThat(verdict(new Finding.Trend("s", List.of("Aq"), Direction.FALLS), r)).isEqualTo(Verdict.AGREES);

        assertThat(verdict(new Finding.Below("s", List.of("A", "C"), 50, 20.0), r)).isEqualTo(Verdict.AGREES);
        assertThat(verdict(new Finding.Below("s", List.of("A", "C"), 50, null), r)).isEqualTo(Verdict.INCONCLUSIVE);   // 60 at 30 tps: 1 of 6 contradicts
        assertThat(verdict(new Finding.Below("s", List.of("A"), 42, null), r)).isEqualTo(Verdict.DIFFERS);

        assertThat(verdict(new Finding.SlowGrowth("s", List.of("A"), 2, 10, null), r)).isEqualTo(Verdict.AGREES);   // 40 -> 60 <= 80
        assertThat(verdict(new Finding.SlowGrowth("s", List.of("Cq"), 2, 10, null), r)).isEqualTo(Verdict.DIFFERS);   // 10 -> 90 > 20

        assertThat(verdict(new Finding.SmallGap("s", "C", "A", 3, 0.1, 20.0), r)).isEqualTo(Verdict.AGREES);   // 40 vs 40, 40.5 vs 45
        assertThat(verdict(new Finding.SmallGap("s", "Cq", "Aq", 3, 0.1, null), r)).isEqualTo(Verdict.DIFFERS);
    }

    @Test void largerGapComparesTheCostOfOneChangeUnderTwoSetups() {
        // a -> b costs 5 ms; a -> c costs 100 ms: the change hurts c's setup far more
        Results r = new Data().ok("a", 10, "update", 50, "query", 5).ok("b", 10, "update", 55).ok("c", 10, "update", 150, "query", 6).results();
        assertThat(verdict(new Finding.LargerGap("s", "B", "A", "C", "A"), r)).isEqualTo(Verdict.AGREES);
        assertThat(verdict(new Finding.LargerGap("s", "C", "A", "B", "A"), r)).isEqualTo(Verdict.DIFFERS);
        assertThat(verdict(new Finding.LargerGap("s", "Cq", "Aq", "Cq", "Aq"), r)).isEqualTo(Verdict.INCONCLUSIVE);
    }

    @Test void saturationRules() {
        Results r = new Data().ok("a", 10, "update", 40).ok("a", 20, "update", 50).saturated("a", 4, 30)
                .ok("b", 10, "update", 40).saturated("b", 4, 20)
                .ok("c", 10, "update", 40).ok("c", 20, "update", 40).ok("c", 30, "update", 40).results();
        assertThat(verdict(new Finding.Sustains("s", List.of("A"), 20), r)).isEqualTo(Verdict.AGREES);
        assertThat(verdict(new Finding.Sustains("s", List.of("B"), 20), r)).isEqualTo(Verdict.DIFFERS);
        assertThat(verdict(new Finding.Sustains("s", List.of("C"), 50), r)).isEqualTo(Verdict.INCONCLUSIVE);   // never ran that high

        assertThat(verdict(new Finding.SaturatesBetween("s", "A", 25, 35), r)).isEqualTo(Verdict.AGREES);
        assertThat(verdict(new Finding.SaturatesBetween("s", "B", 25, 35), r)).isEqualTo(Verdict.DIFFERS);   // too early
        assertThat(verdict(new Finding.SaturatesBetween("s", "C", 5, 15), r)).isEqualTo(Verdict.DIFFERS);   // kept up beyond
        assertThat(verdict(new Finding.SaturatesBetween("s", "C", 40, 50), r)).isEqualTo(Verdict.INCONCLUSIVE);

        assertThat(verdict(new Finding.HighestLoad("s", "C", List.of("A", "B")), r)).isEqualTo(Verdict.AGREES);
        assertThat(verdict(new Finding.HighestLoad("s", "A", List.of("C")), r)).isEqualTo(Verdict.DIFFERS);
        Results none = new Data().ok("a", 10, "update", 40).ok("c", 10, "update", 40).results();
        assertThat(verdict(new Finding.HighestLoad("s", "A", List.of("C")), none)).isEqualTo(Verdict.INCONCLUSIVE);
    }

    @Test void rulesAlongTheNumberOfSites() {
        Data d = new Data(List.of(2, 4, 8));
        d.okAt("a", 2, 10, "update", 100).okAt("a", 4, 10, "update", 80).okAt("a", 8, 10, "update", 120);
        d.okAt("a", 2, 20, "update", 100).saturated("a", 2, 20);
        d.rows.removeIf(x -> x.setup().equals("a") && x.sites() == 2 && x.load() == 20 && x.status() == Status.OK);
        d.okAt("a", 4, 20, "update", 300).okAt("a", 8, 20, "update", 350);
        Results r = d.results();
        assertThat(r.values("A10")).containsOnlyKeys(2.0, 4.0, 8.0);
        assertThat(verdict(new Finding.Dip("s", "A10", 2, 4, 8), r)).isEqualTo(Verdict.AGREES);
        assertThat(verdict(new Finding.Dip("s", "A20", 2, 4, 8), r)).isEqualTo(Verdict.INCONCLUSIVE);
        assertThat(verdict(new Finding.SaturatedOnlyAt("s", "A20", List.of(2.0)), r)).isEqualTo(Verdict.AGREES);
        assertThat(verdict(new Finding.SaturatedOnlyAt("s", "A10", List.of(2.0)), r)).isEqualTo(Verdict.DIFFERS);
        assertThat(verdict(new Finding.Trend("s", List.of("A20"), Direction.GROWS), r)).isEqualTo(Verdict.AGREES);   // 300 -> 350 (4 -> 8 sites)
    }

    @Test void theBreakdownChargesTheWriteSetWaitToRemoteWritesAndLeavesTheRestToOther() {
        Data d = new Data();
        for (double l : List.of(10.0, 20.0)) {
            double k = l / 10;   // everything doubles from 10 to 20 tps
            d.ok("a", l, "update", 50 * k).ok("b", l, "update-lw", 60 * k, "update-rw", 100 * k).ok("c", l, "update", 70 * k);
            for (String s : List.of("x", "y")) {
                d.phase("a", l, s, "total", 10, 45 * k).phase("a", l, s, "delivery", 10, 40 * k).phase("a", l, s, "execution", 10, 2 * k)
                        .phase("a", l, s, "lock_wait", 10, 1 * k).phase("a", l, s, "commit", 10, 0.5 * k);
                // b: 4 updates per site, 3 of them remote writes waiting 30 ms for their write set
                d.phase("b", l, s, "total", 4, 70 * k).phase("b", l, s, "delivery", 4, 50 * k).phase("b", l, s, "execution", 4, 2 * k)
                        .phase("b", l, s, "writeset_wait", 3, 30 * k);
                d.phase("c", l, s, "total", 10, 60 * k).phase("c", l, s, "delivery", 10, 45 * k).phase("c", l, s, "execution", 10, 3 * k);
            }
        }
        Results r = d.results();
        Breakdown bd = (Breakdown) r.experiment().panel("bd");
        Derived.BarValues a = Derived.bar(r, bd.bars().get(0), 4, 10).orElseThrow();
        assertThat(a.parts()).containsEntry("delivery", 40.0).containsEntry("execution", 2.0).containsEntry("writeset_wait", 0.0);
        assertThat(a.parts().get("other")).isCloseTo(50 - 40 - 2 - 1 - 0.5, within(1e-9));
        Derived.BarValues lw = Derived.bar(r, bd.bars().get(1), 4, 10).orElseThrow(), rw = Derived.bar(r, bd.bars().get(2), 4, 10).orElseThrow();
        assertThat(lw.parts().get("writeset_wait")).isZero();
        assertThat(rw.parts().get("writeset_wait")).isEqualTo(30.0);
        assertThat(rw.parts().get("other")).isCloseTo(100 - 50 - 2 - 30, within(1e-9));
        assertThat(rw.writeSetWaits()).isEqualTo(6);

        assertThat(verdict(new Finding.PartShare("s", "bd", List.of("a"), "delivery", 0.5, 1), r)).isEqualTo(Verdict.AGREES);   // 80%
        assertThat(verdict(new Finding.PartShare("s", "bd", List.of("a", "c"), "execution", 0, 0.2), r)).isEqualTo(Verdict.AGREES);
        assertThat(verdict(new Finding.PartShare("s", "bd", List.of("rw"), "delivery", 0.6, 1), r)).isEqualTo(Verdict.DIFFERS);   // 50%
        assertThat(verdict(new Finding.PartAtLeast("s", "bd", "rw", "writeset_wait", 5), r)).isEqualTo(Verdict.AGREES);
        assertThat(verdict(new Finding.PartAtLeast("s", "bd", "lw", "writeset_wait", 5), r)).isEqualTo(Verdict.DIFFERS);
        assertThat(verdict(new Finding.BarsGrow("s", "bd"), r)).isEqualTo(Verdict.AGREES);
        // c: 70 at 10 tps (lw 60, rw 100: nearer lw), 140 at 20 (lw 120, rw 200: nearer lw again)
        assertThat(verdict(new Finding.Nearer("s", "bd", "c", "lw", "rw", List.of("lw", "rw")), r)).isEqualTo(Verdict.INCONCLUSIVE);
        assertThat(verdict(new Finding.Nearer("s", "bd", "c", "lw", "rw", List.of("lw", "lw")), r)).isEqualTo(Verdict.AGREES);
        assertThat(verdict(new Finding.PhaseShorter("s", "a", "delivery", "b", "delivery"), r)).isEqualTo(Verdict.AGREES);
        assertThat(verdict(new Finding.PhaseShorter("s", "b", "delivery", "a", "delivery"), r)).isEqualTo(Verdict.DIFFERS);

        // a bar whose setup never ran leaves every finding about it inconclusive, even when the other bars agree
        d.rows.removeIf(x -> x.setup().equals("b"));
        d.notRun("b");
        Results partial = d.results();
        assertThat(verdict(new Finding.PartShare("s", "bd", List.of("a", "lw"), "execution", 0, 0.2), partial)).isEqualTo(Verdict.INCONCLUSIVE);
        assertThat(new Finding.BarsGrow("s", "bd").evaluate(partial).ours()).contains("not measured: lw, rw (not run: no write sets)");
        assertThat(verdict(new Finding.PhaseShorter("s", "a", "delivery", "b", "delivery"), partial)).isEqualTo(Verdict.INCONCLUSIVE);
    }

    @Test void theOptSafeOverlapIsTheExecutionBeforeTheFinalDelivery() {
        Data d = new Data();
        // 10 tps: opt delivery at 5, no lock wait, 4 ms execution, final delivery at 80: all of it overlapped
        d.ok("c", 10, "update", 90).phase("c", 10, "x", "optimistic_delivery", 10, 5).phase("c", 10, "x", "delivery", 10, 80)
                .phase("c", 10, "x", "lock_wait", 10, 0).phase("c", 10, "x", "execution", 10, 4);
        // 20 tps: at site x 40 ms lock wait leaves 2 of 8 ms overlapped; site y (3x the updates) starts after the final delivery
        d.ok("c", 20, "update", 120).phase("c", 20, "x", "optimistic_delivery", 10, 5).phase("c", 20, "x", "delivery", 10, 47)
                .phase("c", 20, "x", "lock_wait", 10, 40).phase("c", 20, "x", "execution", 10, 8)
                .phase("c", 20, "y", "optimistic_delivery", 30, 5).phase("c", 20, "y", "delivery", 30, 30)
                .phase("c", 20, "y", "lock_wait", 30, 60).phase("c", 20, "y", "execution", 30, 8);
        Results r = d.results();
        Derived.OverlapValues lo = Derived.overlap(r, "c", 4, 10).orElseThrow(), hi = Derived.overlap(r, "c", 4, 20).orElseThrow();
        assertThat(lo.fraction()).isEqualTo(1.0);
        assertThat(hi.executionMs()).isEqualTo(8.0);
        assertThat(hi.overlappedMs()).isCloseTo(2.0 * 10 / 40, within(1e-9));
        assertThat(verdict(new Finding.OverlapAtLowLoad("s", "ov", 0.9), r)).isEqualTo(Verdict.AGREES);
        assertThat(verdict(new Finding.OverlapShrinks("s", "ov", 0.1), r)).isEqualTo(Verdict.AGREES);
        Results one = new Data().ok("c", 10, "update", 90).phase("c", 10, "x", "optimistic_delivery", 10, 5).phase("c", 10, "x", "delivery", 10, 6)
                .phase("c", 10, "x", "lock_wait", 10, 0).phase("c", 10, "x", "execution", 10, 4).results();
        assertThat(verdict(new Finding.OverlapAtLowLoad("s", "ov", 0.9), one)).isEqualTo(Verdict.DIFFERS);   // 1 of 4 ms
        assertThat(verdict(new Finding.OverlapShrinks("s", "ov", 0.1), one)).isEqualTo(Verdict.INCONCLUSIVE);
    }
}
