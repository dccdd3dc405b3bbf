package org.wanrep.cli;

import org.wanrep.bench.WanResponseBench;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

@Command(name = "wan-bench", mixinStandardHelpOptions = true,
        description = "Update response time per site on an emulated WAN at low load, symmetric execution, against the analytical bound.")
public final class WanBenchCommand implements Callable<Integer> {
    @Option(names = "--latency-matrix", defaultValue = "na4", description = "preset or CSV (default: ${DEFAULT-VALUE})") String matrix;
    @Option(names = "--rate", defaultValue = "10", description = "update transactions per second in all (default: ${DEFAULT-VALUE})") double rate;
    @Option(names = "--txns", defaultValue = "200", description = "measured transactions per delivery mode (default: ${DEFAULT-VALUE})") int txns;
    @Option(names = "--warmup", defaultValue = "20", description = "warm-up transactions (default: ${DEFAULT-VALUE})") int warmup;
    @Option(names = "--delivery", split = ",", description = "delivery modes (default: agreed,safe,opt-safe)") List<String> deliveries = new ArrayList<>(List.of("agreed", "safe", "opt-safe"));
    @Option(names = "--out", defaultValue = "runs/wan-bench", description = "directory for results.json (default: ${DEFAULT-VALUE})") Path outDir;

    @Override public Integer call() throws Exception {
        List<WanResponseBench.SiteResult> rs = new WanResponseBench(matrix, rate, txns, warmup, System.out).run(deliveries);
        System.out.println();
        System.out.print(WanResponseBench.table(rs));
        String json = WanResponseBench.json(rs, matrix, rate);
        Files.createDirectories(outDir);
        Files.writeString(outDir.resolve("results.json"), json + "\n");
        System.out.println(json);
        return rs.stream().allMatch(r -> r.p50Ms() <= r.limitMs()) ? 0 : 1;
    }
}
