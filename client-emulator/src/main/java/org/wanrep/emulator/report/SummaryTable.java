package org.wanrep.emulator.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The readable summary of a run: response times per site and type, the schedule, the middleware phases. */
public final class SummaryTable {
    private SummaryTable() {}

    public static String of(RunResult r) {
        StringBuilder b = new StringBuilder();
        b.append("response times (ms, from each transaction's due time) over the measured transactions:\n");
        b.append(line("%-14s %-12s %8s %6s %7s %8s %8s %8s %8s %8s %9s %6s %8s %8s", "site", "type", "measured", "aborts", "retries",
                "tput/s", "mean", "p50", "p90", "p99", "max", "late", "lag p50", "lag p99"));
        List<String> errors = new ArrayList<>();
        for (SiteResult s : r.rows()) {
            List<TypeResult> ts = new ArrayList<>(s.types());
            if (ts.size() > 1) ts.add(s.all());
            for (TypeResult t : ts) {
                b.append(line("%-14s %-12s %8d %6d %7d %8.1f %8.1f %8.1f %8.1f %8.1f %9.1f %6d %8.2f %8.2f", s.site(), t.type(), t.measured(),
                        t.aborts(), t.retries(), t.throughputTps(), t.meanMs(), t.p50Ms(), t.p90Ms(), t.p99Ms(), t.maxMs(), t.lateStarts(),
                        t.lagP50Ms(), t.lagP99Ms()));
                if (t.lastError() != null && !t.type().equals("all")) errors.add("  " + s.site() + " " + t.type() + ": last error: " + t.lastError());
            }
        }
        errors.stream().distinct().forEach(e -> b.append(e).append('\n'));
        b.append('\n').append("schedule per site (rates in transactions/s; late = started more than 1 ms after due; a start is late by\n"
                + "the dispatch lag, the scheduling thread waking late, plus the wait for a free connection; ms):\n");
        b.append(line("%-14s %9s %10s %10s %10s %11s %9s %10s %13s %13s", "site", "submitted", "discarded", "unfinished", "target/s", "achieved/s",
                "window s", "late (all)", "dispatch p99", "conn wait p99"));
        for (SiteResult s : r.rows())
            b.append(line("%-14s %9d %10s %10d %10s %11.2f %9.1f %10d %13.2f %13.2f", s.site(), s.transactions(), s.discardedWarmup() + "+" + s.discardedCooldown(),
                    s.unfinished(), s.targetRateTps() == null ? "closed" : String.format(Locale.ROOT, "%.2f", s.targetRateTps()),
                    s.achievedRateTps(), s.windowS(), s.lateStartsAll(), s.dispatchLagP99Ms(), s.connectionWaitP99Ms()));
        boolean anyPhases = r.sites().stream().anyMatch(s -> !s.phases().isEmpty());
        if (anyPhases) {
            b.append('\n').append("where the updates' time went, per origin site (middleware phases over the measured window, ms):\n");
            b.append(line("%-14s %-20s %7s %9s %9s %9s", "site", "phase", "count", "mean", "p50", "p99"));
            for (SiteResult s : r.sites())
                for (PhaseRow p : s.phases())
                    if (p.count() > 0) b.append(line("%-14s %-20s %7d %9.1f %9.1f %9.1f", s.site(), p.phase(), p.count(), p.meanMs(), p.p50Ms(), p.p99Ms()));
        }
        r.sites().stream().map(SiteResult::phasesNote).filter(n -> n != null).distinct().forEach(n -> b.append("note: ").append(n).append('\n'));
        return b.toString();
    }

    private static String line(String fmt, Object... args) { return String.format(Locale.ROOT, fmt, args) + "\n"; }
}
