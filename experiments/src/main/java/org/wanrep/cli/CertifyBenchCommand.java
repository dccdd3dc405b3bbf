package org.wanrep.cli;

import org.wanrep.bench.CertifyLatencyBench;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

@Command(name = "certify-bench", mixinStandardHelpOptions = true,
        description = "COMMIT latency of interactive blocks under certification (blocks=certify), per site on an emulated WAN, against one delivery's analytical bound.")
public final class CertifyBenchCommand implements Callable<Integer> {
    @Option(names = "--latency-matrix", defaultValue = "na4", description = "preset or CSV (default: ${DEFAULT-VALUE})") String matrix;
    @Option(names = "--delivery", defaultValue = "safe", description = "agreed, safe or opt-safe (default: ${DEFAULT-VALUE})") String delivery;
    @Option(names = "--blocks", defaultValue = "100", description = "measured blocks per site (default: ${DEFAULT-VALUE})") int blocks;
    @Option(names = "--warmup", defaultValue = "20", description = "warm-up blocks per site (default: ${DEFAULT-VALUE})") int warmup;
    @Option(names = "--pause-ms", defaultValue = "50", description = "pause between a client's blocks (default: ${DEFAULT-VALUE})") long pauseMs;
    @Option(names = "--out", defaultValue = "runs/certify-bench", description = "directory for results.json (default: ${DEFAULT-VALUE})") Path outDir;

    @Override public Integer call() throws Exception {
        List<CertifyLatencyBench.SiteResult> rs = new CertifyLatencyBench(matrix, delivery, blocks, warmup, pauseMs, System.out).run();
        System.out.println();
        System.out.print(CertifyLatencyBench.table(rs));
        String json = CertifyLatencyBench.json(rs, matrix, delivery);
        Files.createDirectories(outDir);
        Files.writeString(outDir.resolve("results.json"), json + "\n");
        System.out.println(json);
        return rs.stream().allMatch(CertifyLatencyBench.SiteResult::pass) ? 0 : 1;
    }
}
