package org.wanrep.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.wanrep.bench.AddSiteBench;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

@Command(name = "add-site-bench", mixinStandardHelpOptions = true,
        description = "A new, empty site added to a running 3-site cluster under pgbench TPC-B-like load at a fraction of its measured capacity:"
                + " state-transfer time, time until the new site serves, the serving sites' response times before and during; four replicas compared.")
public final class AddSiteBenchCommand implements Callable<Integer> {
    @Option(names = "--scale", defaultValue = "10", description = "pgbench scale factor (default: ${DEFAULT-VALUE})") int scale;
    @Option(names = "--clients", defaultValue = "4", description = "clients at each of sites a and b (default: ${DEFAULT-VALUE})") int clients;
    @Option(names = "--load", defaultValue = "0.5", description = "offered load as a fraction of the measured capacity (default: ${DEFAULT-VALUE})") double load;
    @Option(names = "--capacity-seconds", defaultValue = "8", description = "closed-loop seconds that measure the capacity (default: ${DEFAULT-VALUE})") int capacitySeconds;
    @Option(names = "--before-seconds", defaultValue = "10", description = "seconds measured at the offered load before the addition (default: ${DEFAULT-VALUE})") int beforeSeconds;
    @Option(names = "--out", defaultValue = "runs/add-site-bench", description = "directory for results.json (default: ${DEFAULT-VALUE})") Path outDir;

    @Override public Integer call() throws Exception {
        AddSiteBench.Result r = new AddSiteBench(scale, clients, load, capacitySeconds, beforeSeconds, System.out).run();
        System.out.println();
        System.out.printf("%-34s %s%n", "capacity (closed loop)", String.format("%.0f tps", r.capacityTps()));
        System.out.printf("%-34s %s%n", "offered", String.format("%.0f tps (%.0f%%)", r.offeredTps(), load * 100));
        System.out.printf("%-34s %s%n", "achieved before / during", String.format("%.0f / %.0f tps", r.tpsBefore(), r.tpsDuring()));
        System.out.printf("%-34s %s%n", "state transfer (scale " + scale + ")", String.format("%.1f s", r.transferSeconds()));
        System.out.printf("%-34s %s%n", "new site serving after", String.format("%.1f s", r.servingAfterSeconds()));
        System.out.printf("%-34s %s%n", "p50 / p99 before", String.format("%.1f / %.1f ms", r.p50BeforeMs(), r.p99BeforeMs()));
        System.out.printf("%-34s %s%n", "p50 / p99 during", String.format("%.1f / %.1f ms", r.p50DuringMs(), r.p99DuringMs()));
        System.out.printf("%-34s %s%n", "client errors", r.errors());
        System.out.printf("%-34s %s%n", "replicas (4)", r.replicas());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("benchmark", "add-site-bench");
        m.put("scale", scale);
        m.put("capacity_tps", Math.round(r.capacityTps()));
        m.put("offered_tps", Math.round(r.offeredTps()));
        m.put("tps_before", Math.round(r.tpsBefore()));
        m.put("tps_during", Math.round(r.tpsDuring()));
        m.put("transfer_s", r.transferSeconds());
        m.put("serving_after_s", r.servingAfterSeconds());
        m.put("p50_before_ms", r.p50BeforeMs());
        m.put("p99_before_ms", r.p99BeforeMs());
        m.put("p50_during_ms", r.p50DuringMs());
        m.put("p99_during_ms", r.p99DuringMs());
        m.put("client_errors", r.errors());
        m.put("replicas", r.replicas());
        String json = new ObjectMapper().writeValueAsString(m);
        Files.createDirectories(outDir);
        Files.writeString(outDir.resolve("results.json"), json + "\n");
        System.out.println(json);
        return r.replicas().equals("same") ? 0 : 1;
    }
}
