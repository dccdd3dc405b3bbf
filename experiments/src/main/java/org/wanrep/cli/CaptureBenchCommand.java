package org.wanrep.cli;

import org.wanrep.writeset.bench.CaptureLatencyBench;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;

@Command(name = "capture-bench", mixinStandardHelpOptions = true,
        description = "Write-set capture latency: local COMMIT to the write set in the middleware (wal2json slot), on a throw-away replica.")
public final class CaptureBenchCommand implements Callable<Integer> {
    @Option(names = "--transactions", defaultValue = "2000", description = "measured transactions (default: ${DEFAULT-VALUE})") int transactions;
    @Option(names = "--warmup", defaultValue = "200", description = "warm-up transactions (default: ${DEFAULT-VALUE})") int warmup;

    @Override public Integer call() throws Exception {
        CaptureLatencyBench.main(new String[]{"--transactions", Integer.toString(transactions), "--warmup", Integer.toString(warmup)});
        return 0;
    }
}
