package org.wanrep.cli;

import org.wanrep.bench.LockBench;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;

@Command(name = "lock-bench", mixinStandardHelpOptions = true,
        description = "The lock manager with a large backlog: enqueue N transactions at once, then commit them in grant order; time per enqueue and per release.")
public final class LockBenchCommand implements Callable<Integer> {
    @Option(names = "--transactions", defaultValue = "100000", description = "queued transactions (default: ${DEFAULT-VALUE})") int transactions;
    @Option(names = "--seed", defaultValue = "12", description = "seed of the random-table workload (default: ${DEFAULT-VALUE})") long seed;

    @Override public Integer call() {
        LockBench.main(new String[]{"--transactions", Integer.toString(transactions), "--seed", Long.toString(seed)});
        return 0;
    }
}
