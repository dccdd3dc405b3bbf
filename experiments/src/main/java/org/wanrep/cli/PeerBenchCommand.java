package org.wanrep.cli;

import org.wanrep.bench.PeerBench;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

@Command(name = "peer-bench", mixinStandardHelpOptions = true,
        description = "wanrep beside direct PostgreSQL, pgbouncer and pgpool-II native replication: pgbench tps, ratio to direct, failures; replicas compared.")
public final class PeerBenchCommand implements Callable<Integer> {
    @Option(names = "--clients", defaultValue = "8", description = "pgbench clients (default: ${DEFAULT-VALUE})") int clients;
    @Option(names = "--seconds", defaultValue = "20", description = "seconds per system and workload (default: ${DEFAULT-VALUE})") int seconds;
    @Option(names = "--warmup", defaultValue = "10", description = "seconds of each system and workload run first, unmeasured: JIT compilation, caches (default: ${DEFAULT-VALUE})") int warmup;
    @Option(names = "--jit-warmup-max", defaultValue = "120", description = "after --warmup, wanrep (whose three sites run in this JVM) warms up on, 5 s at a time,"
            + " until its JIT compiler threads used under 5%% of a core, for at most this many seconds per workload; 0: no more (default: ${DEFAULT-VALUE})") int jitWarmupMax;
    @Option(names = "--rounds", defaultValue = "1", description = "measure every system this many times per workload, alternated (direct, the others, direct...),"
            + " and take each system's median ratio to the same round's direct run: on a shared machine whose speed drifts, systems measured minutes apart"
            + " are measured on different machines, in effect (default: ${DEFAULT-VALUE})") int rounds;
    @Option(names = "--scale", defaultValue = "10", description = "pgbench scale factor (default: ${DEFAULT-VALUE})") int scale;
    @Option(names = "--out", defaultValue = "runs/peer-bench", description = "directory for results.json and results.csv (default: ${DEFAULT-VALUE})") Path outDir;
    @Option(names = "--set", description = "override a setting of the wanrep cluster, key=value (repeatable), e.g. blocks=certify") List<String> overrides = new java.util.ArrayList<>();
    @Option(names = "--systems", split = ",", description = "systems to run besides direct PostgreSQL (every ratio is to it), of pgbouncer, pgpool-II, wanrep, 3-servers (three PostgreSQL without middleware, every update run at all three: the ceiling of any three-replica system here; default: all)") List<String> systems = List.of("pgbouncer", "pgpool-II", "wanrep", PeerBench.CEILING);
    @Option(names = "--workloads", split = ",", description = "workloads to run, of select, tpcb, interactive, random, every-site (interactive tpcb-like with wanrep's clients split over its three sites; default: all)") List<String> workloads = PeerBench.WORKLOADS;

    @Override public Integer call() throws Exception {
        java.util.Map<String, String> settings = new java.util.LinkedHashMap<>();
        for (String o : overrides) {
            int eq = o.indexOf('=');
            if (eq <= 0) throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this), "--set needs key=value: " + o);
            settings.put(o.substring(0, eq).trim(), o.substring(eq + 1).trim());
        }
        PeerBench bench = new PeerBench(clients, seconds, scale, settings, workloads, System.out).warmup(warmup).jitWarmupMax(jitWarmupMax).systems(systems).rounds(rounds);
        List<PeerBench.Run> runs = bench.run();
        System.out.println();
        if (rounds > 1) {
            System.out.print(bench.roundTables());
            System.out.println();
        }
        System.out.print(PeerBench.table(runs));
        String ceiling = PeerBench.ceilingTable(runs);
        if (!ceiling.isEmpty()) {
            System.out.println();
            System.out.print(ceiling);
        }
        System.out.println();
        System.out.print(PeerBench.cpuTable(runs));
        if (!bench.wanrepThreads().isEmpty()) {
            System.out.println();
            System.out.print(PeerBench.threadTable(bench.wanrepThreads(), 12));
        }
        bench.replicaVerdicts().forEach((s, v) -> System.out.println("replicas of " + s + ": " + v));
        bench.certification().forEach((s, v) -> System.out.println("wanrep site " + s + ": interactive blocks " + v));
        String json = PeerBench.json(runs, clients, scale, seconds, warmup, bench.replicaVerdicts(), settings, bench.wanrepThreads(), bench.jitWarmup(), bench.rounds());
        Files.createDirectories(outDir);
        Files.writeString(outDir.resolve("results.json"), json + "\n");
        Files.writeString(outDir.resolve("results.csv"), PeerBench.csv(runs));
        System.out.println(json);
        return bench.replicaVerdicts().values().stream().allMatch(v -> v.startsWith("same")) ? 0 : 1;
    }
}
