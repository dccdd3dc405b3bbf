package org.wanrep.cli;

import org.wanrep.demo.Demo;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.concurrent.Callable;

@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "The main job: a local multi-site cluster on an emulated WAN, one client emulator per site running the synthetic workload, "
                + "then a results table with the middleware's phase breakdown, a replica check, plots and result files.")
public final class DemoCommand implements Callable<Integer> {
    @Option(names = "--latency-matrix", defaultValue = "na4", description = "preset or CSV (default: ${DEFAULT-VALUE})") String matrix;
    @Option(names = "--sites", defaultValue = "4", description = "number of sites (default: ${DEFAULT-VALUE})") int sites;
    @Option(names = "--delivery", defaultValue = "safe", description = "agreed, safe or opt-safe (default: ${DEFAULT-VALUE})") String delivery;
    @Option(names = "--rate", defaultValue = "20", description = "transactions per second in all (default: ${DEFAULT-VALUE})") double rate;
    @Option(names = "--seconds", defaultValue = "60", description = "length of the schedule (default: ${DEFAULT-VALUE})") int seconds;
    @Option(names = "--seed", defaultValue = "1", description = "workload seed (default: ${DEFAULT-VALUE})") long seed;
    @Option(names = "--connections", defaultValue = "16", description = "client connections per site (default: ${DEFAULT-VALUE})") int connections;
    @Option(names = "--out", defaultValue = "runs/demo",
            description = "directory for results.json, results.csv, sites.csv, phases.csv, response_times.png, phases.png (default: ${DEFAULT-VALUE})") Path out;

    @Override public Integer call() throws Exception {
        return new Demo(new Demo.Options(matrix, sites, delivery, rate, seconds, seed, connections, out), System.out).run() ? 0 : 1;
    }
}
