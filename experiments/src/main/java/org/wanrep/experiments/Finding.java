package org.wanrep.experiments;

import org.wanrep.experiments.Experiment.Axis;
import org.wanrep.experiments.Experiment.Breakdown;
import org.wanrep.experiments.Experiment.Overlap;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One of the study's findings and the rule that decides, from our measured numbers only, whether
 * our run agrees with it. Every rule is stated in {@link #rule()} and printed in the report next
 * to the numbers it used.
 * <p>
 * Common ground. Only points that ran and kept up with their load count (status OK). Two response
 * times are <em>tied</em> when they differ by at most {@link #TOL_REL} (the study's own confidence
 * interval, +-5%) or {@link #TOL_MS} (timer and scheduling noise), whichever is larger. Rules that
 * look at several points tally each point as confirming, contradicting or undecided; the verdict is
 * <b>agrees</b> when a majority of the points confirm and none contradicts, <b>differs</b> when a
 * majority contradicts, and <b>inconclusive</b> otherwise, or when a configuration did not run.
 */
public sealed interface Finding {
    double TOL_REL = 0.05, TOL_MS = 1.0;

    /** The study's finding, in its words as far as possible. */
    String study();

    /** How our verdict is decided. */
    String rule();

    Evaluation evaluate(Results r);

    enum Verdict {
        AGREES, DIFFERS, INCONCLUSIVE;

        public String label() { return name().toLowerCase(Locale.ROOT); }
    }

    /** Our side: the verdict and the numbers it rests on. */
    record Evaluation(Verdict verdict, String ours) {}

    /** The tie tolerance between two response times. */
    static double tolerance(double a, double b) { return Math.max(TOL_MS, TOL_REL * Math.min(Math.abs(a), Math.abs(b))); }

    // ------------------------------------------------------------------ rules on curves

    /** At each common point, the curves' values rise in the order given (fastest first). */
    record Ordered(String study, List<String> curves, boolean tiesInOrder) implements Finding {
        public String rule() {
            return "at each point where all of " + String.join(", ", curves) + " kept up, their values must rise in that order; a tie (within 5% or 1 ms) "
                    + (tiesInOrder ? "counts as in order (the study calls the difference very small)" : "leaves the point undecided")
                    + "; a reversal beyond the tie contradicts";
        }

        public Evaluation evaluate(Results r) {
            Optional<Evaluation> missing = missing(r, curves);
            if (missing.isPresent()) return missing.get();
            List<TreeMap<Double, Double>> vs = curves.stream().map(r::values).toList();
            TreeSet<Double> xs = common(vs);
            Tally t = new Tally();
            StringBuilder b = new StringBuilder(String.join(" / ", curves) + ": ");
            for (double x : xs) {
                boolean reversed = false, allHold = true;
                List<String> cells = new ArrayList<>();
                for (int i = 0; i < vs.size(); i++) {
                    double v = vs.get(i).get(x);
                    cells.add(ms(v));
                    if (i == 0) continue;
                    double prev = vs.get(i - 1).get(x), tol = tolerance(prev, v);
                    if (prev > v + tol) reversed = true;
                    else if (!(prev < v - tol) && !tiesInOrder) allHold = false;
                }
                t.add(reversed ? -1 : allHold ? 1 : 0);
                b.append(x(r, curves.get(0), x)).append(' ').append(String.join(" / ", cells)).append(" ms").append(reversed ? " (out of order)" : allHold ? "" : " (tie)").append("; ");
            }
            if (xs.isEmpty()) return new Evaluation(Verdict.INCONCLUSIVE, "no point where all of them kept up");
            return new Evaluation(t.verdict(), b.append(t).toString());
        }
    }

    enum Direction { GROWS, FALLS }

    /** Along each curve, from its first to its last point that kept up, the value grows (or falls) beyond the tie. */
    record Trend(String study, List<String> curves, Direction direction) implements Finding {
        public String rule() {
            return "for each of " + String.join(", ", curves) + ", the value at its last point that kept up must be " + (direction == Direction.GROWS ? "above" : "below")
                    + " the value at its first by more than the tie (5% or 1 ms); no change or the opposite contradicts; curves with fewer than two points are undecided";
        }

        public Evaluation evaluate(Results r) {
            return eachCurve(r, curves, (c, b) -> {
                TreeMap<Double, Double> v = r.values(c);
                if (v.size() < 2) {
                    b.append(c).append(": fewer than two points; ");
                    return 0;
                }
                double first = v.firstEntry().getValue(), last = v.lastEntry().getValue(), tol = tolerance(first, last);
                boolean up = last > first + tol, down = last < first - tol;
                b.append(c).append(": ").append(ms(first)).append(" -> ").append(ms(last)).append(" ms (").append(x(r, c, v.firstKey())).append(" -> ")
                        .append(x(r, c, v.lastKey())).append("); ");
                return (direction == Direction.GROWS ? up : down) ? 1 : -1;
            });
        }
    }

    /** Every value at x up to {@code upToX} (null: all) is at most {@code limitMs}; a saturated point there contradicts. */
    record Below(String study, List<String> curves, double limitMs, Double upToX) implements Finding {
        public String rule() {
            return "every point of " + String.join(", ", curves) + (upToX == null ? "" : " up to " + num(upToX) + " tps") + " must keep up with a value at most "
                    + ms(limitMs) + " ms; each point above it, or saturated, contradicts";
        }

        public Evaluation evaluate(Results r) {
            Optional<Evaluation> missing = missing(r, curves);
            if (missing.isPresent()) return missing.get();
            Tally t = new Tally();
            double worst = Double.NEGATIVE_INFINITY;
            String where = "";
            List<String> sat = new ArrayList<>();
            for (String c : curves) {
                for (var e : r.values(c).entrySet()) {
                    if (upToX != null && e.getKey() > upToX) continue;
                    t.add(e.getValue() <= limitMs ? 1 : -1);
                    if (e.getValue() > worst) {
                        worst = e.getValue();
                        where = c + " at " + x(r, c, e.getKey());
                    }
                }
                for (double x : r.saturatedAt(c))
                    if (upToX == null || x <= upToX) {
                        t.add(-1);
                        sat.add(c + " at " + x(r, c, x));
                    }
            }
            if (t.total() == 0) return new Evaluation(Verdict.INCONCLUSIVE, "no point in range");
            String ours = "highest " + (Double.isInfinite(worst) ? "n/a" : ms(worst) + " ms (" + where + ")") + (sat.isEmpty() ? "" : "; saturated: " + String.join(", ", sat)) + "; " + t;
            return new Evaluation(t.verdict(), ours);
        }
    }

    /** Each curve keeps up at some load of at least {@code minLoad} tps. */
    record Sustains(String study, List<String> curves, double minLoad) implements Finding {
        public String rule() {
            return "each of " + String.join(", ", curves) + " must keep up (throughput = offered load, median below the cap) at a load of at least " + num(minLoad)
                    + " tps; saturating at or below it contradicts; not having run that high is undecided";
        }

        public Evaluation evaluate(Results r) {
            return eachCurve(r, curves, (c, b) -> {
                TreeMap<Double, Double> v = r.values(c);
                double high = v.isEmpty() ? 0 : v.lastKey();
                Double sat = r.saturatedAt(c).stream().min(Double::compare).orElse(null);
                b.append(c).append(": kept up to ").append(num(high)).append(" tps").append(sat == null ? " (highest run)" : ", saturated at " + num(sat) + " tps").append("; ");
                return high >= minLoad ? 1 : sat != null && sat <= minLoad ? -1 : 0;
            });
        }
    }

    /**
     * Along each curve, the value at its last point up to {@code upToX} that kept up is at most
     * max(maxFactor x the first, the first + maxAddMs): it grows only slowly.
     */
    record SlowGrowth(String study, List<String> curves, double maxFactor, double maxAddMs, Double upToX) implements Finding {
        public String rule() {
            return "for each of " + String.join(", ", curves) + ", the value at its last point that kept up" + (upToX == null ? "" : " up to " + num(upToX) + " tps")
                    + " must be at most " + num(maxFactor) + " times the value at its first point, or the first plus " + ms(maxAddMs)
                    + " ms, whichever is larger; more contradicts; fewer than two points is undecided";
        }

        public Evaluation evaluate(Results r) {
            return eachCurve(r, curves, (c, b) -> {
                TreeMap<Double, Double> v = new TreeMap<>(upToX == null ? r.values(c) : r.values(c).headMap(upToX, true));
                if (v.size() < 2) {
                    b.append(c).append(": fewer than two points; ");
                    return 0;
                }
                double first = v.firstEntry().getValue(), last = v.lastEntry().getValue();
                b.append(c).append(": ").append(ms(first)).append(" -> ").append(ms(last)).append(" ms (").append(x(r, c, v.firstKey())).append(" -> ")
                        .append(x(r, c, v.lastKey())).append("); ");
                return last <= Math.max(maxFactor * first, first + maxAddMs) ? 1 : -1;
            });
        }
    }

    /** The curve's first saturated load lies in [lo, hi] tps. */
    record SaturatesBetween(String study, String curve, double lo, double hi) implements Finding {
        public String rule() {
            return curve + " must saturate first at a load between " + num(lo) + " and " + num(hi) + " tps; saturating below " + num(lo)
                    + " or keeping up above " + num(hi) + " tps differs; neither (not run high enough) is inconclusive";
        }

        public Evaluation evaluate(Results r) {
            Optional<Evaluation> missing = missing(r, List.of(curve));
            if (missing.isPresent()) return missing.get();
            TreeMap<Double, Double> v = r.values(curve);
            double high = v.isEmpty() ? 0 : v.lastKey();
            Double sat = r.saturatedAt(curve).stream().min(Double::compare).orElse(null);
            String ours = "kept up to " + num(high) + " tps" + (sat == null ? " (the highest load run)" : ", first saturated at " + num(sat) + " tps");
            if (sat != null && sat >= lo && sat <= hi) return new Evaluation(Verdict.AGREES, ours);
            if ((sat != null && sat < lo) || high > hi) return new Evaluation(Verdict.DIFFERS, ours);
            return new Evaluation(Verdict.INCONCLUSIVE, ours);
        }
    }

    /** The curve keeps up to a higher load than every other. */
    record HighestLoad(String study, String curve, List<String> others) implements Finding {
        public String rule() {
            return curve + " must keep up to a higher load than each of " + String.join(", ", others)
                    + " (or to the same highest load while one of them saturated earlier); a lower one differs; when none saturated within the loads run it is inconclusive";
        }

        public Evaluation evaluate(Results r) {
            List<String> all = new ArrayList<>(others);
            all.add(0, curve);
            Optional<Evaluation> missing = missing(r, all);
            if (missing.isPresent()) return missing.get();
            StringBuilder b = new StringBuilder();
            double mine = highest(r, curve), best = Double.NEGATIVE_INFINITY;
            boolean anySaturated = false;
            for (String c : all) {
                double h = highest(r, c);
                boolean sat = !r.saturatedAt(c).isEmpty();
                anySaturated |= sat;
                if (!c.equals(curve)) best = Math.max(best, h);
                b.append(c).append(" ").append(num(h)).append(sat ? " tps (then saturated)" : " tps").append("; ");
            }
            String ours = "kept up to: " + b.toString().replaceAll("; $", "");
            if (!anySaturated) return new Evaluation(Verdict.INCONCLUSIVE, ours + " (none saturated within the loads run)");
            if (mine > best || (mine == best && r.saturatedAt(curve).isEmpty())) return new Evaluation(Verdict.AGREES, ours);
            if (mine < best) return new Evaluation(Verdict.DIFFERS, ours);
            return new Evaluation(Verdict.INCONCLUSIVE, ours);
        }

        private static double highest(Results r, String c) {
            TreeMap<Double, Double> v = r.values(c);
            return v.isEmpty() ? 0 : v.lastKey();
        }
    }

    /** At each common point up to {@code upToX}, curve a stays within max(absMs, rel x b) of curve b. */
    record SmallGap(String study, String a, String b, double absMs, double rel, Double upToX) implements Finding {
        public String rule() {
            return "at each point" + (upToX == null ? "" : " up to " + num(upToX) + " tps") + " where both kept up, " + a + " must be within " + ms(absMs) + " ms or "
                    + Math.round(rel * 100) + "% of " + b + ", whichever is larger; a larger gap contradicts";
        }

        public Evaluation evaluate(Results r) {
            Optional<Evaluation> missing = missing(r, List.of(a, b));
            if (missing.isPresent()) return missing.get();
            TreeMap<Double, Double> va = r.values(a), vb = r.values(b);
            Tally t = new Tally();
            StringBuilder s = new StringBuilder(a + " vs " + b + ": ");
            for (double x : common(List.of(va, vb))) {
                if (upToX != null && x > upToX) continue;
                double gap = va.get(x) - vb.get(x);
                t.add(Math.abs(gap) <= Math.max(absMs, rel * vb.get(x)) ? 1 : -1);
                s.append(x(r, a, x)).append(' ').append(ms(va.get(x))).append(" vs ").append(ms(vb.get(x))).append(" ms; ");
            }
            if (t.total() == 0) return new Evaluation(Verdict.INCONCLUSIVE, "no common point in range");
            return new Evaluation(t.verdict(), s.append(t).toString());
        }
    }

    /** The gap a2 - b2 exceeds the gap a1 - b1 beyond the tie, at each point where all four kept up. */
    record LargerGap(String study, String a1, String b1, String a2, String b2) implements Finding {
        public String rule() {
            return "at each point where all four kept up, (" + a2 + " minus " + b2 + ") must exceed (" + a1 + " minus " + b1
                    + ") by more than the tie (5% of the slowest of the four, or 1 ms); the opposite contradicts, closer is undecided";
        }

        public Evaluation evaluate(Results r) {
            List<String> four = List.of(a1, b1, a2, b2);
            Optional<Evaluation> missing = missing(r, four);
            if (missing.isPresent()) return missing.get();
            List<TreeMap<Double, Double>> v = four.stream().map(r::values).toList();
            Tally t = new Tally();
            StringBuilder s = new StringBuilder();
            for (double x : common(v)) {
                double g1 = v.get(0).get(x) - v.get(1).get(x), g2 = v.get(2).get(x) - v.get(3).get(x);
                double slowest = v.stream().mapToDouble(m -> m.get(x)).max().orElse(0), tol = Math.max(TOL_MS, TOL_REL * slowest);
                t.add(g2 > g1 + tol ? 1 : g2 < g1 - tol ? -1 : 0);
                s.append(x(r, a1, x)).append(": +").append(ms(g2)).append(" vs +").append(ms(g1)).append(" ms; ");
            }
            if (t.total() == 0) return new Evaluation(Verdict.INCONCLUSIVE, "no point where all four kept up");
            return new Evaluation(t.verdict(), s.append(t).toString().replace("+-", "-"));
        }
    }

    /** At {@code x1}, {@code x2}, {@code x3} the curve falls, then rises again (the study's 60 tps line in Fig. 6b). */
    record Dip(String study, String curve, double x1, double x2, double x3) implements Finding {
        public String rule() {
            return curve + " must fall from " + num(x1) + " to " + num(x2) + " and rise again from " + num(x2) + " to " + num(x3) + " beyond the tie (5% or 1 ms); "
                    + "a missing point is inconclusive, any other shape differs";
        }

        public Evaluation evaluate(Results r) {
            Optional<Evaluation> missing = missing(r, List.of(curve));
            if (missing.isPresent()) return missing.get();
            TreeMap<Double, Double> v = r.values(curve);
            Double a = v.get(x1), b = v.get(x2), c = v.get(x3);
            if (a == null || b == null || c == null) return new Evaluation(Verdict.INCONCLUSIVE, "points missing or saturated: " + v.keySet());
            String ours = ms(a) + " -> " + ms(b) + " -> " + ms(c) + " ms";
            boolean dip = b < a - tolerance(a, b) && c > b + tolerance(b, c);
            return new Evaluation(dip ? Verdict.AGREES : Verdict.DIFFERS, ours);
        }
    }

    /** The curve saturates exactly at the given x values and keeps up at every other point run. */
    record SaturatedOnlyAt(String study, String curve, List<Double> xs) implements Finding {
        public String rule() {
            return curve + " must saturate at " + xs.stream().map(Finding::num).toList() + " and keep up at every other point; any other outcome differs";
        }

        public Evaluation evaluate(Results r) {
            Optional<Evaluation> missing = missing(r, List.of(curve));
            if (missing.isPresent()) return missing.get();
            TreeSet<Double> sat = new TreeSet<>(r.saturatedAt(curve));
            TreeSet<Double> ok = new TreeSet<>(r.values(curve).keySet());
            String ours = "saturated at " + sat.stream().map(Finding::num).toList() + ", kept up at " + ok.stream().map(Finding::num).toList();
            if (sat.isEmpty() && ok.isEmpty()) return new Evaluation(Verdict.INCONCLUSIVE, "no point ran");
            return new Evaluation(sat.equals(new TreeSet<>(xs)) ? Verdict.AGREES : Verdict.DIFFERS, ours);
        }
    }

    // ------------------------------------------------------------------ rules on phases, breakdowns and overlaps

    /** A phase of setup a is shorter than a phase of setup b, at each load where both ran. */
    record PhaseShorter(String study, String setupA, String phaseA, String setupB, String phaseB) implements Finding {
        public String rule() {
            return "at each load where both kept up, the mean " + phaseA + " phase under " + setupA + " must be shorter than the mean " + phaseB + " under " + setupB
                    + " by more than the tie (5% or 1 ms); longer contradicts, a tie is undecided";
        }

        public Evaluation evaluate(Results r) {
            for (String setup : List.of(setupA, setupB))
                if (!r.setupRan(setup))
                    return new Evaluation(Verdict.INCONCLUSIVE, "not measured: " + setup + r.setupNotRunReason(setup).map(x -> " (" + x + ")").orElse(""));
            int n = r.experiment().siteCounts().get(r.experiment().siteCounts().size() - 1);
            Tally t = new Tally();
            StringBuilder s = new StringBuilder(setupA + " " + phaseA + " vs " + setupB + " " + phaseB + ": ");
            for (double l : r.experiment().loads()) {
                if (!r.ok(setupA, n, l) || !r.ok(setupB, n, l)) continue;
                Optional<Double> a = Derived.phaseMean(r, setupA, n, l, phaseA), b = Derived.phaseMean(r, setupB, n, l, phaseB);
                if (a.isEmpty() || b.isEmpty()) continue;
                double tol = tolerance(a.get(), b.get());
                t.add(a.get() < b.get() - tol ? 1 : a.get() > b.get() + tol ? -1 : 0);
                s.append(num(l)).append(" tps ").append(ms(a.get())).append(" vs ").append(ms(b.get())).append(" ms; ");
            }
            if (t.total() == 0) return new Evaluation(Verdict.INCONCLUSIVE, "no load where both ran with these phases");
            return new Evaluation(t.verdict(), s.append(t).toString());
        }
    }

    /** In a breakdown, a part's share of each bar's mean response time lies in [min, max] at every load. */
    record PartShare(String study, String breakdown, List<String> bars, String part, double min, double max) implements Finding {
        public String rule() {
            return "in " + breakdown + ", the " + part + " part of " + String.join(", ", bars) + " must be between " + Math.round(min * 100) + "% and "
                    + Math.round(max * 100) + "% of the bar's mean response time at each load; outside contradicts";
        }

        public Evaluation evaluate(Results r) {
            Optional<Evaluation> missing = missingBars(r, breakdown, bars);
            if (missing.isPresent()) return missing.get();
            Tally t = new Tally();
            StringBuilder s = new StringBuilder();
            for (String bar : bars)
                for (Derived.BarValues v : barValues(r, breakdown, bar)) {
                    double share = v.responseMs() > 0 ? v.parts().get(part) / v.responseMs() : Double.NaN;
                    t.add(share >= min && share <= max ? 1 : -1);
                    s.append(bar).append(" at ").append(num(v.load())).append(" tps ").append(ms(v.parts().get(part))).append(" of ").append(ms(v.responseMs()))
                            .append(" ms (").append(pct(share)).append("); ");
                }
            if (t.total() == 0) return new Evaluation(Verdict.INCONCLUSIVE, String.join(", ", bars) + ": no breakdown (not run, saturated, or no phases)");
            return new Evaluation(t.verdict(), s.append(t).toString());
        }
    }

    /** In a breakdown, a part of a bar is at least {@code minMs} at every load. */
    record PartAtLeast(String study, String breakdown, String bar, String part, double minMs) implements Finding {
        public String rule() {
            return "in " + breakdown + ", the " + part + " part of " + bar + " must be at least " + ms(minMs) + " ms at each load; less contradicts";
        }

        public Evaluation evaluate(Results r) {
            Optional<Evaluation> missing = missingBars(r, breakdown, List.of(bar));
            if (missing.isPresent()) return missing.get();
            Tally t = new Tally();
            StringBuilder s = new StringBuilder(bar + " " + part + ": ");
            for (Derived.BarValues v : barValues(r, breakdown, bar)) {
                t.add(v.parts().get(part) >= minMs ? 1 : -1);
                s.append(num(v.load())).append(" tps ").append(ms(v.parts().get(part))).append(" ms; ");
            }
            if (t.total() == 0) return new Evaluation(Verdict.INCONCLUSIVE, bar + ": no breakdown (not run, saturated, or no phases)");
            return new Evaluation(t.verdict(), s.append(t).toString());
        }
    }

    /** In a breakdown, every bar's mean response time grows from the first load to the last beyond the tie. */
    record BarsGrow(String study, String breakdown) implements Finding {
        public String rule() {
            return "in " + breakdown + ", each bar's mean response time at the last load must exceed the one at the first load by more than the tie (5% or 1 ms); no growth contradicts";
        }

        public Evaluation evaluate(Results r) {
            Breakdown b = (Breakdown) r.experiment().panel(breakdown);
            Optional<Evaluation> missing = missingBars(r, breakdown, b.bars().stream().map(Experiment.Bar::label).toList());
            if (missing.isPresent()) return missing.get();
            Tally t = new Tally();
            StringBuilder s = new StringBuilder();
            for (Experiment.Bar bar : b.bars()) {
                List<Derived.BarValues> vs = barValues(r, breakdown, bar.label());
                if (vs.size() < 2) continue;
                double first = vs.get(0).responseMs(), last = vs.get(vs.size() - 1).responseMs();
                t.add(last > first + tolerance(first, last) ? 1 : -1);
                s.append(bar.label()).append(' ').append(ms(first)).append(" -> ").append(ms(last)).append(" ms; ");
            }
            if (t.total() == 0) return new Evaluation(Verdict.INCONCLUSIVE, "no bar measured at two loads");
            return new Evaluation(t.verdict(), s.append(t).toString());
        }
    }

    /**
     * In a breakdown, at its i-th load a bar's mean response time is nearer to bar {@code nearest.get(i)}
     * than to the other of {@code a}, {@code b}.
     */
    record Nearer(String study, String breakdown, String bar, String a, String b, List<String> nearest) implements Finding {
        public String rule() {
            return "in " + breakdown + ", the mean response time of " + bar + " must be nearer to " + String.join(", then ", nearest)
                    + " at the breakdown's loads in turn (nearer to " + a + " or to " + b + "); nearer to the other contradicts";
        }

        public Evaluation evaluate(Results r) {
            Breakdown p = (Breakdown) r.experiment().panel(breakdown);
            Optional<Evaluation> missing = missingBars(r, breakdown, List.of(bar, a, b));
            if (missing.isPresent()) return missing.get();
            int n = r.experiment().siteCounts().get(r.experiment().siteCounts().size() - 1);
            Tally t = new Tally();
            StringBuilder s = new StringBuilder();
            for (int i = 0; i < p.loads().size() && i < nearest.size(); i++) {
                double l = p.loads().get(i);
                Optional<Derived.BarValues> x = Derived.bar(r, bar(p, bar), n, l), va = Derived.bar(r, bar(p, a), n, l), vb = Derived.bar(r, bar(p, b), n, l);
                if (x.isEmpty() || va.isEmpty() || vb.isEmpty()) continue;
                double da = Math.abs(x.get().responseMs() - va.get().responseMs()), db = Math.abs(x.get().responseMs() - vb.get().responseMs());
                String near = da < db ? a : da > db ? b : null;
                t.add(near == null ? 0 : near.equals(nearest.get(i)) ? 1 : -1);
                s.append(num(l)).append(" tps: ").append(bar).append(' ').append(ms(x.get().responseMs())).append(", ").append(a).append(' ')
                        .append(ms(va.get().responseMs())).append(", ").append(b).append(' ').append(ms(vb.get().responseMs())).append(" ms; ");
            }
            if (t.total() == 0) return new Evaluation(Verdict.INCONCLUSIVE, "the bars were not all measured");
            return new Evaluation(t.verdict(), s.append(t).toString());
        }

        private static Experiment.Bar bar(Breakdown p, String label) {
            return p.bars().stream().filter(x -> x.label().equals(label)).findFirst().orElseThrow(() -> new IllegalArgumentException("no bar " + label));
        }
    }

    /** Under opt-safe, at the lowest load that kept up, at least {@code minFraction} of the execution overlapped the ordering. */
    record OverlapAtLowLoad(String study, String overlap, double minFraction) implements Finding {
        public String rule() {
            return "in " + overlap + ", at the lowest load that kept up, the overlapped share of the mean execution time must be at least "
                    + Math.round(minFraction * 100) + "%; less differs";
        }

        public Evaluation evaluate(Results r) {
            List<Derived.OverlapValues> vs = overlaps(r, overlap);
            if (vs.isEmpty()) return new Evaluation(Verdict.INCONCLUSIVE, "no opt-safe phases measured");
            Derived.OverlapValues v = vs.get(0);
            String ours = num(v.load()) + " tps: " + ms(v.overlappedMs()) + " of " + ms(v.executionMs()) + " ms execution overlapped (" + pct(v.fraction()) + ")";
            return new Evaluation(v.fraction() >= minFraction ? Verdict.AGREES : Verdict.DIFFERS, ours);
        }
    }

    /** Under opt-safe, the overlapped share falls by at least {@code minDrop} from the lowest to the highest load that kept up. */
    record OverlapShrinks(String study, String overlap, double minDrop) implements Finding {
        public String rule() {
            return "in " + overlap + ", the overlapped share of execution at the highest load that kept up must be at least " + Math.round(minDrop * 100)
                    + " points below the share at the lowest; a smaller drop or a rise differs; fewer than two loads is inconclusive";
        }

        public Evaluation evaluate(Results r) {
            List<Derived.OverlapValues> vs = overlaps(r, overlap);
            if (vs.size() < 2) return new Evaluation(Verdict.INCONCLUSIVE, "fewer than two loads with opt-safe phases");
            Derived.OverlapValues lo = vs.get(0), hi = vs.get(vs.size() - 1);
            StringBuilder s = new StringBuilder();
            for (Derived.OverlapValues v : vs) s.append(num(v.load())).append(" tps ").append(pct(v.fraction())).append(" of ").append(ms(v.executionMs())).append(" ms; ");
            return new Evaluation(lo.fraction() - hi.fraction() >= minDrop ? Verdict.AGREES : Verdict.DIFFERS, s.toString().replaceAll("; $", ""));
        }
    }

    // ------------------------------------------------------------------ helpers

    private static List<Derived.BarValues> barValues(Results r, String breakdown, String barLabel) {
        Breakdown p = (Breakdown) r.experiment().panel(breakdown);
        Experiment.Bar bar = p.bars().stream().filter(x -> x.label().equals(barLabel)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException(breakdown + ": no bar " + barLabel));
        int n = r.experiment().siteCounts().get(r.experiment().siteCounts().size() - 1);
        List<Derived.BarValues> vs = new ArrayList<>();
        for (double l : p.loads()) Derived.bar(r, bar, n, l).ifPresent(vs::add);
        return vs;
    }

    private static List<Derived.OverlapValues> overlaps(Results r, String overlap) {
        Overlap p = (Overlap) r.experiment().panel(overlap);
        int n = r.experiment().siteCounts().get(r.experiment().siteCounts().size() - 1);
        List<Derived.OverlapValues> vs = new ArrayList<>();
        for (double l : r.experiment().loads()) Derived.overlap(r, p.setup(), n, l).filter(v -> v.executionMs() > 0).ifPresent(vs::add);
        return vs;
    }

    /** Inconclusive when the setup of one of a breakdown's bars never ran. */
    private static Optional<Evaluation> missingBars(Results r, String breakdown, List<String> labels) {
        Breakdown p = (Breakdown) r.experiment().panel(breakdown);
        Map<String, List<String>> gone = new java.util.LinkedHashMap<>();
        for (String label : labels) {
            Experiment.Bar bar = p.bars().stream().filter(x -> x.label().equals(label)).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException(breakdown + ": no bar " + label));
            if (!r.setupRan(bar.setup())) gone.computeIfAbsent(r.setupNotRunReason(bar.setup()).orElse(""), k -> new ArrayList<>()).add(label);
        }
        return gone.isEmpty() ? Optional.empty() : Optional.of(new Evaluation(Verdict.INCONCLUSIVE, notMeasured(gone)));
    }

    /** Judges one curve: appends what it found to the note and returns +1 confirms, -1 contradicts, 0 undecided. */
    interface CurveCheck {
        int judge(String curve, StringBuilder note);
    }

    /** Inconclusive if a curve never ran; otherwise each curve judged on its own, tallied. */
    private static Evaluation eachCurve(Results r, List<String> curves, CurveCheck check) {
        Optional<Evaluation> missing = missing(r, curves);
        if (missing.isPresent()) return missing.get();
        Tally t = new Tally();
        StringBuilder b = new StringBuilder();
        for (String c : curves) t.add(check.judge(c, b));
        return new Evaluation(t.verdict(), b.append(t).toString());
    }

    /** Inconclusive when one of the curves never ran (its setup could not start). */
    private static Optional<Evaluation> missing(Results r, List<String> curves) {
        Map<String, List<String>> gone = new java.util.LinkedHashMap<>();
        for (String c : curves) if (!r.ran(c)) gone.computeIfAbsent(r.notRunReason(c).orElse(""), k -> new ArrayList<>()).add(c);
        return gone.isEmpty() ? Optional.empty() : Optional.of(new Evaluation(Verdict.INCONCLUSIVE, notMeasured(gone)));
    }

    /** "not measured: a, b (why); c (why)". */
    private static String notMeasured(Map<String, List<String>> byReason) {
        List<String> parts = new ArrayList<>();
        byReason.forEach((why, what) -> parts.add(String.join(", ", what) + (why.isEmpty() ? "" : " (" + why + ")")));
        return "not measured: " + String.join("; ", parts);
    }

    private static TreeSet<Double> common(List<TreeMap<Double, Double>> vs) {
        TreeSet<Double> xs = new TreeSet<>(vs.get(0).keySet());
        for (Map<Double, Double> v : vs) xs.retainAll(v.keySet());
        return xs;
    }

    private static String x(Results r, String curve, double x) {
        return r.panelOf(curve).x() == Axis.SITES ? num(x) + " sites" : num(x) + " tps";
    }

    static String ms(double v) { return String.format(Locale.ROOT, v >= 100 ? "%.0f" : "%.1f", v); }

    static String num(double v) { return v == Math.rint(v) ? Long.toString((long) v) : String.format(Locale.ROOT, "%.1f", v); }

    static String pct(double f) { return Double.isNaN(f) ? "n/a" : Math.round(f * 100) + "%"; }

    /** Per-point outcomes: +1 confirms, -1 contradicts, 0 undecided. */
    final class Tally {
        private int yes, no, undecided;

        void add(int outcome) {
            if (outcome > 0) yes++;
            else if (outcome < 0) no++;
            else undecided++;
        }

        int total() { return yes + no + undecided; }

        Verdict verdict() {
            int n = total();
            if (n == 0) return Verdict.INCONCLUSIVE;
            if (no == 0 && 2 * yes > n) return Verdict.AGREES;
            if (2 * no > n) return Verdict.DIFFERS;
            return Verdict.INCONCLUSIVE;
        }

        @Override public String toString() {
            return "[" + yes + " confirm, " + no + " contradict, " + undecided + " undecided]";
        }
    }
}
