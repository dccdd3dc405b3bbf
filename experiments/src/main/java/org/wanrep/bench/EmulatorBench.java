package org.wanrep.bench;

import org.wanrep.emulator.Arrivals;
import org.wanrep.emulator.EmulatorConfig;
import org.wanrep.emulator.EmulatorGroup;
import org.wanrep.emulator.Load;
import org.wanrep.emulator.SiteTarget;
import org.wanrep.emulator.report.ResultFiles;
import org.wanrep.emulator.report.RunResult;
import org.wanrep.emulator.report.SiteResult;
import org.wanrep.emulator.report.SummaryTable;
import org.wanrep.emulator.synthetic.SyntheticWorkload;
import org.wanrep.pg.LocalPostgres;

import java.io.PrintStream;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How faithfully the emulator keeps its schedule: one emulator, open loop, straight against a
 * PostgreSQL server of its own (no proxy), at a high rate. Targets: the measured transactions start
 * at the target rate within 2%, and their schedule lag (start minus due time) has p99 of at most 5 ms.
 * <p>
 * The transaction is the synthetic query cut to one point read by primary key (one statement, one
 * row of a 10,000-row table): it goes through the whole path (pool, pgjdbc, the server's parser,
 * planner and index) yet costs PostgreSQL a few tens of microseconds, so at 2,000 per second the
 * server needs a fraction of one core and the emulator, not the database, is what is measured.
 */
public final class EmulatorBench {
    public static final double RATE_TOLERANCE = 0.02, LAG_P99_LIMIT_MS = 5.0;

    public record Params(double rate, int transactions, int connections, Arrivals arrivals, long seed, Path out) {}

    public record Verdict(double targetRate, double achievedRate, double rateError, double lagP99Ms, double completedTps, long lateStarts,
                          long measured, long aborts, long unfinished) {
        public boolean ratePass() { return rateError <= RATE_TOLERANCE; }
        public boolean lagPass() { return lagP99Ms <= LAG_P99_LIMIT_MS; }
        public boolean pass() { return ratePass() && lagPass() && aborts == 0 && unfinished == 0; }
    }

    private final Params p;
    private final PrintStream out;

    public EmulatorBench(Params p, PrintStream out) {
        this.p = p;
        this.out = out;
    }

    public static SyntheticWorkload pointReads() { return new SyntheticWorkload(1, 10_000, 0.0, 1); }

    public Verdict run() throws Exception {
        try (LocalPostgres pg = LocalPostgres.startTemporary()) {
            SyntheticWorkload w = pointReads();
            try (Connection c = pg.connect()) {
                w.load(c, null);
            }
            EmulatorConfig cfg = EmulatorConfig.builder(w, new Load.Open(p.rate(), p.arrivals())).transactions(p.transactions())
                    .connections(p.connections()).seed(p.seed()).build();
            out.printf("emulator-bench: %,d point reads at %.0f per second (%s arrivals, %d connections) against PostgreSQL directly, seed %d...%n",
                    p.transactions(), p.rate(), p.arrivals().label(), p.connections(), p.seed());
            RunResult r = new EmulatorGroup(List.of(SiteTarget.of("direct", pg.host(), pg.port(), "postgres")), cfg, out, EmulatorGroup.DEFAULT_PROGRESS).run();
            SiteResult s = r.sites().get(0);
            Verdict v = new Verdict(p.rate(), s.achievedRateTps(), Math.abs(s.achievedRateTps() - p.rate()) / p.rate(), s.all().lagP99Ms(),
                    s.all().throughputTps(), s.all().lateStarts(), s.all().measured(), s.all().aborts(), s.unfinished());
            out.println();
            out.print(SummaryTable.of(r));
            ResultFiles.write(r.withContext(Map.of("benchmark", "emulator-bench", "verdict", json(v))), p.out());
            return v;
        }
    }

    public static String table(Verdict v) {
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "%-34s %12s %12s %s%n", "figure", "measured", "target", "verdict"));
        b.append(String.format(Locale.ROOT, "%-34s %12.2f %12s %s%n", "achieved submission rate (tps)", v.achievedRate(),
                String.format(Locale.ROOT, "%.0f +-2%%", v.targetRate()), v.ratePass() ? "PASS" : "FAIL"));
        b.append(String.format(Locale.ROOT, "%-34s %12.3f %12s %s%n", "schedule lag p99 (ms)", v.lagP99Ms(), "<= 5", v.lagPass() ? "PASS" : "FAIL"));
        b.append(String.format(Locale.ROOT, "%-34s %12.2f %12s%n", "completed throughput (tps)", v.completedTps(), ""));
        b.append(String.format(Locale.ROOT, "%-34s %12d %12s%n", "late starts (> 1 ms) of measured", v.lateStarts(), ""));
        b.append(String.format(Locale.ROOT, "%-34s %12d %12s %s%n", "aborts + unfinished", v.aborts() + v.unfinished(), "0",
                v.aborts() + v.unfinished() == 0 ? "PASS" : "FAIL"));
        return b.toString();
    }

    public static Map<String, Object> json(Verdict v) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("benchmark", "emulator-bench");
        m.put("target_rate_tps", v.targetRate());
        m.put("achieved_rate_tps", v.achievedRate());
        m.put("rate_error", Math.round(v.rateError() * 100000) / 100000.0);
        m.put("rate_pass", v.ratePass());
        m.put("lag_p99_ms", v.lagP99Ms());
        m.put("lag_p99_limit_ms", LAG_P99_LIMIT_MS);
        m.put("lag_pass", v.lagPass());
        m.put("completed_tps", v.completedTps());
        m.put("late_starts", v.lateStarts());
        m.put("measured", v.measured());
        m.put("aborts", v.aborts());
        m.put("unfinished", v.unfinished());
        m.put("pass", v.pass());
        return m;
    }
}
