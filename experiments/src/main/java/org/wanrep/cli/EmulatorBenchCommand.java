package org.wanrep.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.wanrep.bench.EmulatorBench;
import org.wanrep.emulator.Arrivals;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.concurrent.Callable;

@Command(name = "emulator-bench", mixinStandardHelpOptions = true,
        description = "Emulator accuracy against PostgreSQL directly (no proxy): one open-loop emulator at a high rate; the measured "
                + "transactions must start at the target rate within 2%% and with schedule lag p99 <= 5 ms. Prints a table and, as the last "
                + "line, a JSON object; exits 1 if a target is missed.")
public final class EmulatorBenchCommand implements Callable<Integer> {
    @Option(names = "--rate", defaultValue = "2000", description = "transactions per second (default: ${DEFAULT-VALUE})") double rate;
    @Option(names = "--transactions", defaultValue = "30000", description = "transactions in all, 10%% discarded at each end (default: ${DEFAULT-VALUE})") int transactions;
    @Option(names = "--connections", defaultValue = "16", description = "(default: ${DEFAULT-VALUE})") int connections;
    @Option(names = "--arrivals", defaultValue = "fixed", description = "fixed or poisson (default: ${DEFAULT-VALUE})") Arrivals arrivals;
    @Option(names = "--seed", defaultValue = "1", description = "(default: ${DEFAULT-VALUE})") long seed;
    @Option(names = "--out", defaultValue = "runs/emulator-bench", description = "directory for the result files (default: ${DEFAULT-VALUE})") Path out;

    @Override public Integer call() throws Exception {
        EmulatorBench.Verdict v = new EmulatorBench(new EmulatorBench.Params(rate, transactions, connections, arrivals, seed, out), System.out).run();
        System.out.println();
        System.out.print(EmulatorBench.table(v));
        System.out.println(new ObjectMapper().writeValueAsString(EmulatorBench.json(v)));
        return v.pass() ? 0 : 1;
    }
}
