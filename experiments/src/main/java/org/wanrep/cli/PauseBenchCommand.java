package org.wanrep.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.wanrep.bench.PauseBench;
import org.wanrep.plot.TimelineChart;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

@Command(name = "pause-bench", mixinStandardHelpOptions = true,
        description = "One site SIGSTOPped (or, with --fault partition, cut off) under load (3 real processes on lan, pgbench TPC-B-like from clients at the other two):"
                + " the longest time without an acknowledged update at the others (target < 5 s), when the paused site was excluded,"
                + " how long it took to catch up after SIGCONT or the heal (target <= 60 s); replicas compared. Exit 0 when every delivery meets the targets.")
public final class PauseBenchCommand implements Callable<Integer> {
    @Option(names = "--deliveries", split = ",", defaultValue = "safe,agreed", description = "deliveries to run, one cluster each (default: ${DEFAULT-VALUE})") List<String> deliveries;
    @Option(names = "--scale", defaultValue = "10", description = "pgbench scale factor (default: ${DEFAULT-VALUE})") int scale;
    @Option(names = "--clients", defaultValue = "4", description = "closed-loop clients at each of sites a and b (default: ${DEFAULT-VALUE})") int clients;
    @Option(names = "--before-seconds", defaultValue = "10", description = "load before the pause (default: ${DEFAULT-VALUE})") int beforeSeconds;
    @Option(names = "--fault", defaultValue = "pause", description = "pause (SIGSTOP of site c's middleware) or partition (c cut off from a and b inside the JGroups stacks) (default: ${DEFAULT-VALUE})") String fault;
    @Option(names = "--pause-seconds", defaultValue = "20", description = "how long site c stays stopped or cut off (default: ${DEFAULT-VALUE})") int pauseSeconds;
    @Option(names = "--catch-up-limit", defaultValue = "60", description = "seconds after SIGCONT (or the heal) within which c must catch up (default: ${DEFAULT-VALUE})") int catchUpLimit;
    @Option(names = "--out", defaultValue = "runs/pause-bench", description = "directory for results.json, timeline.csv and one PNG per delivery (default: ${DEFAULT-VALUE})") Path outDir;

    private record Pause(String kind, String site, long startNanos, long endNanos) implements TimelineChart.Interval {}

    @Override public Integer call() throws Exception {
        List<PauseBench.Result> results = new ArrayList<>();
        Files.createDirectories(outDir);
        StringBuilder csv = new StringBuilder("fault,delivery,site,t_s,acks\n");
        for (String d : deliveries) {
            PauseBench.Result r = new PauseBench(d, fault, scale, clients, beforeSeconds, pauseSeconds, catchUpLimit, System.out).run();
            results.add(r);
            r.acksPerBucket().forEach((site, v) -> {
                for (int i = 0; i < v.length; i++) csv.append(fault).append(',').append(d).append(',').append(site).append(',').append(String.format("%.1f", i * 0.1)).append(',').append(v[i]).append('\n');
            });
            // the plot in whole seconds (the gap is measured in 100 ms buckets): 100 ms counts are mostly noise
            Map<String, long[]> perSecond = new LinkedHashMap<>();
            r.acksPerBucket().forEach((site, v) -> {
                long[] s = new long[(v.length + 9) / 10];
                for (int i = 0; i < v.length; i++) s[i / 10] += v[i];
                perSecond.put(site, s);
            });
            Path png = TimelineChart.writeRates("pause-bench (" + d + "): updates acknowledged at a and b, site c " + (fault.equals("pause") ? "paused" : "cut off") + " (shaded)",
                    "acknowledged updates / s", perSecond, 1000, List.of(new Pause(fault.equals("pause") ? "SIGSTOP" : "partition", "c", (long) (r.stopAtS() * 1e9),
                            (long) (r.contAtS() * 1e9))), outDir.resolve("pause-bench-" + fault + "-" + d + ".png"));
            System.out.println("plot: " + png);
        }
        System.out.println();
        System.out.printf("%-9s %10s %10s %10s %12s %10s %12s %14s %7s %s%n", "delivery", "tps before", "tps paused", "tps after",
                "longest gap", "excluded", "caught up", "c stopped", "errors", "replicas");
        for (PauseBench.Result r : results)
            System.out.printf("%-9s %10.0f %10.0f %10.0f %10d ms %8s %12s %14s %7d %s%s%n", r.delivery(), r.tpsBefore(), r.tpsDuringPause(), r.tpsAfter(), r.longestGapMs(),
                    r.excludedAfterS() < 0 ? "no" : String.format("%.1f s", r.excludedAfterS()),
                    r.caughtUpAfterS() < 0 ? "no" : String.format("%.1f s", r.caughtUpAfterS()), r.cStopped() ? "yes" : "no", r.errors(), r.replicas(),
                    r.meetsTargets() ? "" : "   TARGET MISSED");
        System.out.println("targets: longest gap without an acknowledged update at a and b < 5000 ms; c caught up <= " + catchUpLimit
                + " s after SIGCONT or the heal (or stopped cleanly); replicas the same");
        List<Map<String, Object>> rows = new ArrayList<>();
        for (PauseBench.Result r : results) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("delivery", r.delivery());
            m.put("fault", r.fault());
            m.put("pause_s", r.pauseSeconds());
            m.put("tps_before", Math.round(r.tpsBefore()));
            m.put("tps_paused", Math.round(r.tpsDuringPause()));
            m.put("tps_after", Math.round(r.tpsAfter()));
            m.put("longest_gap_ms", r.longestGapMs());
            m.put("longest_gap_at_s", r.gapStartS());
            m.put("excluded_after_s", r.excludedAfterS());
            m.put("caught_up_after_s", r.caughtUpAfterS());
            m.put("c_stopped", r.cStopped());
            m.put("client_errors", r.errors());
            m.put("replicas", r.replicas());
            m.put("meets_targets", r.meetsTargets());
            rows.add(m);
        }
        String json = new ObjectMapper().writeValueAsString(Map.of("benchmark", "pause-bench", "scale", scale, "clients_per_site", clients, "runs", rows));
        Files.writeString(outDir.resolve("results.json"), json + "\n");
        Files.writeString(outDir.resolve("timeline.csv"), csv.toString());
        System.out.println(json);
        return results.stream().allMatch(PauseBench.Result::meetsTargets) ? 0 : 1;
    }
}
