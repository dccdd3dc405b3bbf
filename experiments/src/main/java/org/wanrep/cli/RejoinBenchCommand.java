package org.wanrep.cli;

import org.wanrep.bench.RejoinBench;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;

@Command(name = "rejoin-bench", mixinStandardHelpOptions = true,
        description = "Catch-up after a crash (or state transfer, with --log-window below --missed): transactions per second a restarted site applies from the others' logs (pgbench TPC-B-like load),"
                + " and the serving sites' response times during the catch-up against before; replicas compared.")
public final class RejoinBenchCommand implements Callable<Integer> {
    @Option(names = "--scale", defaultValue = "10", description = "pgbench scale factor (default: ${DEFAULT-VALUE})") int scale;
    @Option(names = "--clients", defaultValue = "4", description = "closed-loop clients at each of the two serving sites (default: ${DEFAULT-VALUE})") int clients;
    @Option(names = "--missed", defaultValue = "5000", description = "transactions ordered while the site is down (default: ${DEFAULT-VALUE})") long missed;
    @Option(names = "--log-window", defaultValue = "100000", description = "rejoin.log_window; below --missed the site transfers state first (default: ${DEFAULT-VALUE})") int logWindow;
    @Option(names = "--before-seconds", defaultValue = "10", description = "seconds measured before the crash (default: ${DEFAULT-VALUE})") int beforeSeconds;

    @Override public Integer call() throws Exception {
        RejoinBench.Result r = new RejoinBench(scale, clients, missed, beforeSeconds, logWindow, System.out).run();
        System.out.println(r);
        return r.replicas().equals("same") ? 0 : 1;
    }
}
