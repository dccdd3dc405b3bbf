package org.wanrep.cli;

import org.wanrep.bench.ProxyOverheadBench;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

@Command(name = "proxy-bench", mixinStandardHelpOptions = true,
        description = "Proxy overhead at one site without delay: pgbench through the proxy vs directly, as ratios.")
public final class ProxyBenchCommand implements Callable<Integer> {
    @Option(names = "--clients", defaultValue = "8", description = "pgbench clients (default: ${DEFAULT-VALUE})") int clients;
    @Option(names = "--seconds", defaultValue = "10", description = "seconds per measurement (default: ${DEFAULT-VALUE})") int seconds;
    @Option(names = "--rounds", defaultValue = "2", description = "alternating direct/byte-relay/proxy rounds (default: ${DEFAULT-VALUE})") int rounds;
    @Option(names = "--delivery", defaultValue = "safe", description = "agreed, safe or opt-safe (default: ${DEFAULT-VALUE})") String delivery;
    @Option(names = "--workloads", split = ",", description = "only these: select-only, own-table, random-tables, tpcb-one-request (default: all)")
    java.util.Set<String> workloads = java.util.Set.of();
    @Option(names = "--out", defaultValue = "runs/proxy-bench", description = "directory for results.json (default: ${DEFAULT-VALUE})") Path outDir;

    @Override public Integer call() throws Exception {
        List<ProxyOverheadBench.Result> rs = new ProxyOverheadBench(clients, seconds, rounds, delivery, System.out).only(workloads).run();
        System.out.println();
        System.out.print(ProxyOverheadBench.table(rs));
        String json = ProxyOverheadBench.json(rs);
        Files.createDirectories(outDir);
        Files.writeString(outDir.resolve("results.json"), json + "\n");
        System.out.println(json);
        return rs.stream().allMatch(r -> r.pass()) ? 0 : 1;
    }
}
