package org.wanrep.emulator.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A run's files: {@code results.json} (everything, including each type's response-time histogram),
 * {@code results.csv} (one row per site and type), {@code sites.csv} (the schedule per site) and
 * {@code phases.csv} (the middleware breakdown per site).
 */
public final class ResultFiles {
    private ResultFiles() {}

    public static final ObjectMapper JSON = new ObjectMapper()
            .setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .enable(SerializationFeature.INDENT_OUTPUT);

    /** Writes the files into {@code dir} (created if missing); returns their paths. */
    public static List<Path> write(RunResult r, Path dir) throws IOException {
        Files.createDirectories(dir);
        Path json = dir.resolve("results.json"), csv = dir.resolve("results.csv"), sites = dir.resolve("sites.csv"), phases = dir.resolve("phases.csv");
        JSON.writeValue(json.toFile(), r);

        StringBuilder c = new StringBuilder("site,type,measured,committed,aborts,retries,throughput_tps,mean_ms,p50_ms,p90_ms,p99_ms,max_ms,"
                + "late_starts,lag_p50_ms,lag_p99_ms,lag_max_ms,last_error\n");
        for (SiteResult s : r.rows()) {
            List<TypeResult> ts = new ArrayList<>(s.types());
            ts.add(s.all());
            for (TypeResult t : ts)
                c.append(row(s.site(), t.type(), t.measured(), t.committed(), t.aborts(), t.retries(), t.throughputTps(), t.meanMs(), t.p50Ms(),
                        t.p90Ms(), t.p99Ms(), t.maxMs(), t.lateStarts(), t.lagP50Ms(), t.lagP99Ms(), t.lagMaxMs(), t.lastError()));
        }
        Files.writeString(csv, c);

        StringBuilder st = new StringBuilder("site,target,load,target_rate_tps,achieved_rate_tps,transactions,discarded_warmup,discarded_cooldown,"
                + "unfinished,late_starts_all,dispatch_lag_p99_ms,connection_wait_p99_ms,window_s\n");
        for (SiteResult s : r.rows())
            st.append(row(s.site(), s.target(), s.load(), s.targetRateTps(), s.achievedRateTps(), s.transactions(), s.discardedWarmup(),
                    s.discardedCooldown(), s.unfinished(), s.lateStartsAll(), s.dispatchLagP99Ms(), s.connectionWaitP99Ms(), s.windowS()));
        Files.writeString(sites, st);

        StringBuilder p = new StringBuilder("site,phase,count,mean_ms,p50_ms,p99_ms\n");
        for (SiteResult s : r.sites())
            for (PhaseRow x : s.phases()) p.append(row(s.site(), x.phase(), x.count(), x.meanMs(), x.p50Ms(), x.p99Ms()));
        Files.writeString(phases, p);
        return List.of(json, csv, sites, phases);
    }

    private static String row(Object... values) {
        List<String> cells = new ArrayList<>();
        for (Object v : values) cells.add(cell(v));
        return String.join(",", cells) + "\n";
    }

    private static String cell(Object v) {
        if (v == null) return "";
        String s = v instanceof Double d ? String.format(Locale.ROOT, "%.3f", d) : v.toString();
        return s.contains(",") || s.contains("\"") || s.contains("\n") ? "\"" + s.replace("\"", "\"\"") + "\"" : s;
    }
}
