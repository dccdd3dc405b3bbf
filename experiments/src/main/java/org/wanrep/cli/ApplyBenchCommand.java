package org.wanrep.cli;

import org.wanrep.writeset.bench.ApplyVsExecuteBench;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;

@Command(name = "apply-bench", mixinStandardHelpOptions = true,
        description = "Applying a write set versus executing the original SQL on the same replica: the 10-update transaction and a join-aggregate update.")
public final class ApplyBenchCommand implements Callable<Integer> {
    @Option(names = "--transactions", defaultValue = "500", description = "measured transactions per workload (default: ${DEFAULT-VALUE})") int transactions;
    @Option(names = "--warmup", defaultValue = "50", description = "warm-up transactions (default: ${DEFAULT-VALUE})") int warmup;

    @Override public Integer call() throws Exception {
        ApplyVsExecuteBench.main(new String[]{"--transactions", Integer.toString(transactions), "--warmup", Integer.toString(warmup)});
        return 0;
    }
}
