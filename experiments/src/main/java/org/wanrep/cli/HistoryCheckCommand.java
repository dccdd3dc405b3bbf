package org.wanrep.cli;

import org.wanrep.history.HistoryCheck;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

@Command(name = "history-check", mixinStandardHelpOptions = true,
        description = {"Runs a list-append workload against a local cluster under faults and checks the history: "
                + "lost acknowledged appends, divergent replicas, and dependency cycles (G0, G1a, G1b, G1c, G-single, G2).",
                "Writes history.jsonl, anomalies.json, report.md and timeline.png into --out; the last line is a JSON summary; "
                        + "exit 1 when lost, divergent or anomalies is not 0."})
final class HistoryCheckCommand implements Callable<Integer> {
    @Option(names = "--sites", defaultValue = "3", description = "number of sites (default: ${DEFAULT-VALUE})") int sites;
    @Option(names = "--latency-matrix", defaultValue = "lan", paramLabel = "NAME|FILE",
            description = "preset (na4, na8, global5, ca-es-ch, lan), CSV file, or none (default: ${DEFAULT-VALUE})") String matrix;
    @Option(names = "--delivery", defaultValue = "safe", description = "agreed, safe or opt-safe (default: ${DEFAULT-VALUE})") String delivery;
    @Option(names = "--execution", defaultValue = "symmetric", description = "symmetric, primary-copy or local-copy (default: ${DEFAULT-VALUE})") String execution;
    @Option(names = "--faults", defaultValue = "none", description = "none|crash|sequencer-crash|partition|pause|pg-crash|all, or a comma list (default: ${DEFAULT-VALUE})") String faults;
    @Option(names = "--seconds", defaultValue = "60", description = "workload duration (default: ${DEFAULT-VALUE})") int seconds;
    @Option(names = "--clients-per-site", defaultValue = "4", description = "clients at each site (default: ${DEFAULT-VALUE})") int clients;
    @Option(names = "--keys", defaultValue = "12", description = "active keys at a time (default: ${DEFAULT-VALUE})") int keys;
    @Option(names = "--realtime", description = "also require real-time order (strict serializability, which wanrep does not promise: "
            + "a site may read before applying a commit acknowledged at another site)") boolean realtime;
    @Option(names = "--seed", description = "seed of the fault schedule and the transactions (default: random, printed)") Long seed;
    @Option(names = "--out", defaultValue = "runs/history-check", description = "output directory (default: ${DEFAULT-VALUE})") Path out;
    @Option(names = "--set", description = "override a cluster setting, key=value (repeatable)") List<String> overrides = new ArrayList<>();

    @Override public Integer call() throws Exception {
        long s = seed != null ? seed : System.nanoTime() & 0xFFFFFFFFL;
        HistoryCheck.Summary sum = HistoryCheck.run(new HistoryCheck.Settings(sites, matrix, delivery, execution, faults, seconds, clients,
                s, out, keys, realtime, overrides), System.out);
        System.out.println(HistoryCheck.json(sum));
        return sum.passed() ? 0 : 1;
    }
}
