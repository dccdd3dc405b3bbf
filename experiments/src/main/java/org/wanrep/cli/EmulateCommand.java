package org.wanrep.cli;

import org.wanrep.cluster.ClusterLayout;
import org.wanrep.config.Config;
import org.wanrep.emulator.Arrivals;
import org.wanrep.emulator.DataLoad;
import org.wanrep.emulator.EmulatorConfig;
import org.wanrep.emulator.EmulatorGroup;
import org.wanrep.emulator.Load;
import org.wanrep.emulator.SiteTarget;
import org.wanrep.emulator.WorkloadOptions;
import org.wanrep.emulator.WorkloadRegistry;
import org.wanrep.emulator.dbt1.Scale;
import org.wanrep.emulator.report.ResultFiles;
import org.wanrep.emulator.report.RunResult;
import org.wanrep.emulator.report.SiteResult;
import org.wanrep.emulator.report.SummaryTable;
import org.wanrep.emulator.workload.Workload;
import org.wanrep.plot.RunCharts;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;

@Command(name = "emulate", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Client emulators, one per site, submitting a workload to the sites' proxies: open loop at a target rate "
                + "(--rate, the study's emulator) or closed loop (--clients, each thinking, submitting and waiting). Prints response times "
                + "per site and transaction type, the schedule (late starts, lag) and each proxy's phase breakdown; writes results.json, "
                + "results.csv, sites.csv, phases.csv and response_times.png to --out.")
public final class EmulateCommand implements Callable<Integer> {
    @ArgGroup(exclusive = true, multiplicity = "1", heading = "Where:%n") Where where;

    static final class Where {
        @Option(names = "--cluster", paramLabel = "DIR", required = true,
                description = "a local cluster: reads DIR/cluster.json (written by 'wanrep cluster up') and runs one emulator per site here")
        Path cluster;

        @ArgGroup(exclusive = false) Host host;
    }

    static final class Host {
        @Option(names = "--host", paramLabel = "HOST", required = true, description = "one proxy (or PostgreSQL server): its host") String host;
        @Option(names = "--port", paramLabel = "PORT", required = true, description = "its port") int port;
        @Option(names = "--site", paramLabel = "NAME", description = "its site name in the results (default: HOST:PORT)") String site;
    }

    @Option(names = "--workload", paramLabel = "NAME", defaultValue = "synthetic", description = "synthetic or dbt1 (default: ${DEFAULT-VALUE})") String workload;
    @Option(names = "--rate", paramLabel = "TPS", description = "open loop: transactions per second submitted by this command in all, split evenly over its emulators (default: 20)") Double rate;
    @Option(names = "--arrivals", paramLabel = "KIND", defaultValue = "fixed", description = "open loop: fixed (evenly spaced) or poisson (default: ${DEFAULT-VALUE})") Arrivals arrivals;
    @Option(names = "--clients", paramLabel = "N", description = "closed loop instead: clients in all, split evenly over the emulators") Integer clients;
    @Option(names = "--think-time", paramLabel = "MS", description = "closed loop: fixed think time in ms (default: the workload's; synthetic has none)") Double thinkMs;
    @Option(names = "--transactions", paramLabel = "N", defaultValue = "" + EmulatorConfig.DEFAULT_TRANSACTIONS, description = "per emulator (default: ${DEFAULT-VALUE})") int transactions;
    @Option(names = "--warmup-fraction", paramLabel = "F", defaultValue = "" + EmulatorConfig.DEFAULT_WARMUP_FRACTION,
            description = "share of the transactions left out of the statistics at the start, and again at the end (default: ${DEFAULT-VALUE})") double warmup;
    @Option(names = "--connections", paramLabel = "N", description = "connections per emulator (default: " + EmulatorConfig.DEFAULT_CONNECTIONS + " open loop; one per client closed loop)") Integer connections;
    @Option(names = "--seed", paramLabel = "SEED", description = "seed of the transaction mix and arrivals (default: random, printed); emulator i uses seed + i") Long seed;
    @Option(names = "--load", description = "create and load the workload's data through the first site first") boolean load;
    @Option(names = "--tables", paramLabel = "N", defaultValue = "10", description = "synthetic: tables (default: ${DEFAULT-VALUE})") int tables;
    @Option(names = "--rows", paramLabel = "N", defaultValue = "10000", description = "synthetic: rows per table (default: ${DEFAULT-VALUE})") int rows;
    @Option(names = "--update-fraction", paramLabel = "F", defaultValue = "0.5", description = "synthetic: share of update transactions (default: ${DEFAULT-VALUE})") double updateFraction;
    @Option(names = "--statements", paramLabel = "N", defaultValue = "10", description = "synthetic: updates (or point reads) per transaction (default: ${DEFAULT-VALUE})") int statements;
    @Option(names = "--mix", paramLabel = "MIX", defaultValue = "shopping", description = "dbt1: browsing, shopping or ordering (default: ${DEFAULT-VALUE})") String mix;
    @Option(names = "--items", paramLabel = "N", defaultValue = "10k", description = "dbt1: items, 1k, 10k, 100k, 1M or 10M (default: ${DEFAULT-VALUE})") String items;
    @Option(names = "--ebs", paramLabel = "N", defaultValue = "10", description = "dbt1: emulated browsers, the customer scale (default: ${DEFAULT-VALUE})") int ebs;
    @Option(names = "--max-retries", paramLabel = "N", defaultValue = "" + EmulatorConfig.DEFAULT_MAX_RETRIES, description = "reruns after serialization failures or deadlocks (default: ${DEFAULT-VALUE})") int maxRetries;
    @Option(names = "--out", paramLabel = "DIR", defaultValue = "runs/emulate", description = "directory for the result files (default: ${DEFAULT-VALUE})") Path out;
    @Option(names = "--user", paramLabel = "USER", defaultValue = "postgres", description = "(default: ${DEFAULT-VALUE})") String user;
    @Option(names = "--password", paramLabel = "PASSWORD", defaultValue = "", description = "(default: none)") String password;
    @Option(names = "--database", paramLabel = "DB", defaultValue = "postgres", description = "(default: ${DEFAULT-VALUE})") String database;
    @Option(names = "--progress-seconds", paramLabel = "S", defaultValue = "5", description = "progress line interval (default: ${DEFAULT-VALUE})") int progressSeconds;

    @Override public Integer call() throws Exception {
        if (rate != null && clients != null) throw new IllegalArgumentException("--rate (open loop) and --clients (closed loop) exclude each other");
        if (thinkMs != null && clients == null) throw new IllegalArgumentException("--think-time is for closed-loop runs (--clients)");
        List<SiteTarget> targets = targets();
        Workload w = WorkloadRegistry.create(workload, new WorkloadOptions(tables, rows, updateFraction, statements, mix, Scale.parseItems(items), ebs));
        long s = seed != null ? seed : ThreadLocalRandom.current().nextLong();
        Load l = clients != null
                ? new Load.Closed(clients, thinkMs == null ? null : Duration.ofNanos(Math.round(thinkMs * 1e6)))
                : new Load.Open(rate != null ? rate : 20, arrivals);
        int conns = connections != null ? connections
                : clients != null ? Math.max(1, (clients + targets.size() - 1) / targets.size()) : EmulatorConfig.DEFAULT_CONNECTIONS;
        EmulatorConfig cfg = EmulatorConfig.builder(w, l).transactions(transactions).warmupFraction(warmup).connections(conns).seed(s)
                .maxRetries(maxRetries).user(user).password(password).build();

        System.out.printf("wanrep emulate: %s, %s, %d emulator(s), %d transactions each, seed %d%n", w, l.describe(), targets.size(), transactions, s);
        checkMiddlewareSettings(w, targets);
        if (load) DataLoad.throughFirstSite(w, targets, cfg.connectionProperties(), System.out);
        RunResult r = new EmulatorGroup(targets, cfg, System.out, Duration.ofSeconds(progressSeconds)).run()
                .withContext(Map.of("targets", where.cluster != null ? "cluster " + where.cluster.toAbsolutePath() : targets.get(0).jdbcUrl()));
        System.out.println();
        System.out.print(SummaryTable.of(r));
        List<Path> files = new ArrayList<>(ResultFiles.write(r, out));
        files.add(RunCharts.responseTimes(r, out.resolve("response_times.png")));
        System.out.println("wrote " + files);
        long unfinished = r.sites().stream().mapToLong(SiteResult::unfinished).sum();
        if (unfinished > 0) System.out.println(unfinished + " transactions never answered");
        return unfinished == 0 ? 0 : 1;
    }

    /**
     * A workload whose stored functions hide their writes needs their table sets in every site's
     * configuration. Checked against DIR/wanrep.properties for a cluster made by {@code cluster up}:
     * a set lacking a table the workload declares ends the command (replicas could diverge); missing
     * sets are a warning (every call then locks every table: correct, but serialized). Elsewhere the
     * settings cannot be seen from here, so the command warns and lists them.
     */
    private void checkMiddlewareSettings(Workload w, List<SiteTarget> targets) throws IOException {
        Map<String, String> needed = w.middlewareSettings();
        if (needed.isEmpty()) return;
        Path conf = where.cluster == null ? null : ClusterLayout.configFile(where.cluster);
        String fix = "start the cluster with them ('wanrep cluster up --workload " + w.name() + " ...'), or add these lines to every site's configuration";
        if (conf == null || !Files.isRegularFile(conf)) {
            System.out.printf("WARNING: workload %s needs the table sets of its functions in every site's configuration, and this run cannot check them "
                    + "(%s). Without them each call locks every table (correct, but serialized); a set that lacks a table lets replicas diverge. "
                    + "If you have not yet, %s:%n", w.name(), conf == null ? "no local cluster directory" : "no " + conf, fix);
            needed.forEach((k, v) -> System.out.println("  " + k + "=" + v));
            return;
        }
        FunctionSettingsCheck c = FunctionSettingsCheck.of(needed, Config.load(conf, List.of()), targets.stream().map(SiteTarget::name).toList());
        if (!c.underDeclared().isEmpty())
            throw new IllegalArgumentException("the cluster's configuration (" + conf + ") declares too few tables for workload " + w.name()
                    + "'s functions, so replicas could diverge: " + String.join("; ", c.underDeclared()) + ". Restart the cluster with 'wanrep cluster up --workload "
                    + w.name() + " ...' or fix those keys.");
        if (!c.missing().isEmpty()) {
            System.out.printf("WARNING: %s has no table sets for %d of the %d functions of workload %s (%s): each call of those locks every table, "
                    + "so the run is correct but serialized and does not measure the workload; to measure it, %s:%n", conf, c.missing().size(),
                    c.functions(), w.name(), String.join(", ", c.missing()), fix);
            needed.forEach((k, v) -> System.out.println("  " + k + "=" + v));
        } else {
            System.out.printf("middleware settings: %s declares the table sets of workload %s's functions%n", conf, w.name());
        }
    }

    private List<SiteTarget> targets() throws Exception {
        List<SiteTarget> ts = new ArrayList<>();
        if (where.cluster != null) {
            for (ClusterLayout.SiteEntry e : ClusterLayout.read(where.cluster).sites())
                ts.add(SiteTarget.of(e.name(), e.proxy_host(), e.proxy_port(), database));
            if (ts.isEmpty()) throw new IllegalArgumentException(ClusterLayout.file(where.cluster) + " lists no sites");
        } else {
            Host h = where.host;
            ts.add(SiteTarget.of(h.site != null ? h.site : h.host + ":" + h.port, h.host, h.port, database));
        }
        return ts;
    }
}
