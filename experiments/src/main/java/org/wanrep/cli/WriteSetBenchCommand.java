package org.wanrep.cli;

import org.wanrep.bench.WriteSetWanBench;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

@Command(name = "ws-bench", mixinStandardHelpOptions = true,
        description = "Write-set execution on an emulated WAN at low load: primary-copy local and remote writes and local-copy against symmetric execution, per site.")
public final class WriteSetBenchCommand implements Callable<Integer> {
    @Option(names = "--latency-matrix", defaultValue = "na4", description = "preset or CSV (default: ${DEFAULT-VALUE})") String matrix;
    @Option(names = "--delivery", defaultValue = "agreed", description = "agreed, safe or opt-safe (default: ${DEFAULT-VALUE}, as in the study's figure 3)") String delivery;
    @Option(names = "--rate", defaultValue = "10", description = "update transactions per second in all (default: ${DEFAULT-VALUE})") double rate;
    @Option(names = "--txns", defaultValue = "200", description = "measured transactions per configuration (default: ${DEFAULT-VALUE})") int txns;
    @Option(names = "--warmup", defaultValue = "20", description = "warm-up transactions (default: ${DEFAULT-VALUE})") int warmup;
    @Option(names = "--out", defaultValue = "runs/ws-bench", description = "directory for results.json (default: ${DEFAULT-VALUE})") Path outDir;

    @Override public Integer call() throws Exception {
        List<WriteSetWanBench.Result> rs = new WriteSetWanBench(matrix, delivery, rate, txns, warmup, System.out).run();
        System.out.println();
        System.out.print(WriteSetWanBench.table(rs));
        String json = WriteSetWanBench.json(rs, matrix, delivery, rate);
        Files.createDirectories(outDir);
        Files.writeString(outDir.resolve("results.json"), json + "\n");
        System.out.println(json);
        return rs.stream().allMatch(r -> Double.isNaN(r.limitMs()) || r.pass()) ? 0 : 1;
    }
}
