package org.wanrep.experiments;

import org.wanrep.emulator.synthetic.SyntheticWorkload;
import org.wanrep.experiments.Experiment.Bar;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Figures computed from the middleware's phases: the response-time breakdown of Fig. 3b and the
 * opt-safe overlap of Fig. 5b. The proxies report each phase's count and mean per origin site
 * ({@code SHOW wanrep.phases}); a point's value is the count-weighted mean over its sites.
 */
public final class Derived {
    private Derived() {}

    /** The stacked parts of a breakdown bar, bottom up; {@code other} is the rest of the mean response time. */
    public static final List<String> BREAKDOWN_PARTS = List.of("delivery", "lock_wait", "writeset_wait", "execution", "commit", "other");

    /**
     * One bar at one load: the mean response time the emulators measured for the bar's transaction
     * type and where it went. Under primary copy the middleware does not split its phases by local and
     * remote writes: the write-set wait is charged to remote writes only (local ones execute at their
     * origin and never wait for one), every other phase is the sites' mean over all their updates.
     */
    public record BarValues(String bar, double load, double responseMs, Map<String, Double> parts, long updates, long writeSetWaits) {}

    public static Optional<BarValues> bar(Results r, Bar bar, int sites, double load) {
        if (!r.ok(bar.setup(), sites, load)) return Optional.empty();
        Optional<Results.Row> row = r.row(bar.setup(), sites, load, bar.type()).filter(x -> x.committed() > 0);
        if (row.isEmpty()) return Optional.empty();
        List<Results.PhaseRow> ps = r.phases(bar.setup(), sites, load);
        long total = count(ps, "total");
        if (total == 0) return Optional.empty();
        Map<String, Double> parts = new LinkedHashMap<>();
        double sum = 0;
        for (String p : BREAKDOWN_PARTS) {
            if (p.equals("other")) continue;
            double v;
            if (p.equals("writeset_wait")) {
                v = switch (bar.type()) {
                    case SyntheticWorkload.UPDATE_LW -> 0;
                    case SyntheticWorkload.UPDATE_RW -> mean(ps, p);
                    default -> weightedSum(ps, p) / total;
                };
            } else v = mean(ps, p);
            parts.put(p, v);
            sum += v;
        }
        double resp = row.get().meanMs();
        parts.put("other", Math.max(0, resp - sum));
        return Optional.of(new BarValues(bar.label(), load, resp, parts, total, count(ps, "writeset_wait")));
    }

    /**
     * Fig. 5b at one load: mean execution time and the part of it that overlapped the wait for the final
     * delivery. Per site, execution starts after the optimistic delivery and the lock wait and lasts the
     * execution phase; what of it lies before the final delivery is overlapped. Computed from each site's
     * phase means (the proxies give no per-transaction times), then weighted by the sites' counts.
     */
    public record OverlapValues(double load, double executionMs, double overlappedMs, long count) {
        public double fraction() { return executionMs > 0 ? overlappedMs / executionMs : Double.NaN; }
    }

    public static Optional<OverlapValues> overlap(Results r, String setup, int sites, double load) {
        if (!r.ok(setup, sites, load)) return Optional.empty();
        List<Results.PhaseRow> ps = r.phases(setup, sites, load);
        double exec = 0, over = 0;
        long n = 0;
        for (String site : ps.stream().map(Results.PhaseRow::site).distinct().toList()) {
            List<Results.PhaseRow> at = ps.stream().filter(p -> p.site().equals(site)).toList();
            long c = count(at, "execution");
            if (c == 0 || count(at, "optimistic_delivery") == 0) continue;
            double start = mean(at, "optimistic_delivery") + mean(at, "lock_wait");
            double ex = mean(at, "execution");
            double ov = Math.max(0, Math.min(ex, mean(at, "delivery") - start));
            exec += c * ex;
            over += c * ov;
            n += c;
        }
        return n == 0 ? Optional.empty() : Optional.of(new OverlapValues(load, exec / n, over / n, n));
    }

    /** A phase's mean over a point's sites, weighted by count; empty when no site has it. */
    public static Optional<Double> phaseMean(Results r, String setup, int sites, double load, String phase) {
        List<Results.PhaseRow> ps = r.phases(setup, sites, load);
        return count(ps, phase) == 0 ? Optional.empty() : Optional.of(mean(ps, phase));
    }

    private static long count(List<Results.PhaseRow> ps, String phase) {
        return ps.stream().filter(p -> p.phase().equals(phase)).mapToLong(Results.PhaseRow::count).sum();
    }

    private static double weightedSum(List<Results.PhaseRow> ps, String phase) {
        return ps.stream().filter(p -> p.phase().equals(phase)).mapToDouble(p -> p.count() * p.meanMs()).sum();
    }

    private static double mean(List<Results.PhaseRow> ps, String phase) {
        long c = count(ps, phase);
        return c == 0 ? 0 : weightedSum(ps, phase) / c;
    }
}
