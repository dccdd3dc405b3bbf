package org.wanrep.cli;

import org.wanrep.cluster.ClusterLayout;
import org.wanrep.cluster.LocalCluster;
import org.wanrep.config.Config;
import org.wanrep.config.WorkloadSettings;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

@Command(name = "cluster", mixinStandardHelpOptions = true,
        description = "A local multi-site cluster: one PostgreSQL replica and one middleware process per site.",
        subcommands = {ClusterCommand.Up.class, ClusterCommand.Down.class, ClusterCommand.Status.class, ClusterCommand.Check.class,
                ClusterCommand.StopSite.class, ClusterCommand.StartSite.class, ClusterCommand.AddSite.class, ClusterCommand.RemoveSite.class})
public final class ClusterCommand implements Runnable {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override public void run() { spec.commandLine().usage(System.out); }

    @Command(name = "up", mixinStandardHelpOptions = true, description = "Create and start N sites under DIR; writes DIR/cluster.json. The sites share a key generated in DIR/gcs.secret (0600) and encrypt what they exchange (--set gcs.secret_file= for clear text).")
    static final class Up implements Callable<Integer> {
        @Option(names = "--sites", defaultValue = "3", description = "number of sites (default: ${DEFAULT-VALUE})") int sites;
        @Option(names = "--latency-matrix", defaultValue = "none", description = "preset (na4, na8, global5, ca-es-ch, lan), CSV file, or none") String matrix;
        @Option(names = "--config", description = "base configuration file (YAML or properties)") Path config;
        @Option(names = "--set", description = "override a setting, key=value (repeatable)") List<String> overrides = new ArrayList<>();
        @Option(names = "--workload", paramLabel = "NAME",
                description = "add the settings this emulator workload needs (dbt1: its functions' table sets) under --config and --set (repeatable)")
        List<String> workloads = new ArrayList<>();
        @Option(names = "--dir", required = true, description = "directory for data, logs and cluster.json") Path dir;

        @Override public Integer call() throws Exception {
            LocalCluster.up(dir, sites, matrix, configuration(config, workloads, overrides), System.out);
            return 0;
        }
    }

    /**
     * The configuration {@code cluster up} starts the sites with: the named workloads' settings
     * ({@link WorkloadSettings}), then the file's (may be null), then the overrides; a later one wins.
     */
    public static Config configuration(Path file, List<String> workloads, List<String> overrides) throws IOException {
        Map<String, String> merged = new LinkedHashMap<>();
        for (String w : workloads) merged.putAll(WorkloadSettings.of(w));
        merged.putAll((file == null ? Config.defaults() : Config.load(file, List.of())).explicit());
        return Config.build(merged, overrides);
    }

    @Command(name = "down", mixinStandardHelpOptions = true, description = "Stop every process of the cluster in DIR (removes nothing).")
    static final class Down implements Callable<Integer> {
        @Option(names = "--dir", required = true) Path dir;

        @Override public Integer call() throws Exception {
            LocalCluster.down(dir, System.out);
            return 0;
        }
    }

    @Command(name = "stop-site", mixinStandardHelpOptions = true,
            description = "Stop one site's middleware: cleanly, or with --kill as a crash (SIGKILL). Its PostgreSQL keeps running.")
    static final class StopSite implements Callable<Integer> {
        @Option(names = "--dir", required = true) Path dir;
        @Option(names = "--site", required = true) String site;
        @Option(names = "--kill", description = "kill -9, as a crash") boolean kill;

        @Override public Integer call() throws Exception {
            LocalCluster.stopSite(dir, site, kill, System.out);
            return 0;
        }
    }

    @Command(name = "start-site", mixinStandardHelpOptions = true,
            description = "Start one site's middleware again (and its PostgreSQL if stopped). It rejoins by itself: it "
                    + "replays what it missed from the others' logs, or takes a state transfer from a serving site when "
                    + "that is faster or the logs no longer hold the gap, and serves once caught up.")
    static final class StartSite implements Callable<Integer> {
        @Option(names = "--dir", required = true) Path dir;
        @Option(names = "--site", required = true) String site;

        @Override public Integer call() throws Exception {
            try {
                LocalCluster.startSite(dir, site, System.out);
                return 0;
            } catch (IOException e) {
                System.err.println(e.getMessage());
                return 1;
            }
        }
    }

    @Command(name = "add-site", mixinStandardHelpOptions = true,
            description = "Add a site to the running cluster in DIR: initdb, order the addition through a serving site, start its "
                    + "middleware; it takes a state transfer, catches up, then serves. With a latency matrix the site must be one of its sites.")
    static final class AddSite implements Callable<Integer> {
        @Option(names = "--dir", required = true) Path dir;
        @Option(names = "--name", description = "the new site's name (default: the matrix's first site not in the cluster, or siteN)") String name;

        @Override public Integer call() throws Exception {
            try {
                LocalCluster.addSite(dir, name, System.out);
                return 0;
            } catch (IllegalArgumentException | IOException | java.sql.SQLException e) {
                System.err.println(e.getMessage());
                return 1;
            }
        }
    }

    @Command(name = "remove-site", mixinStandardHelpOptions = true,
            description = "Remove a site from the running cluster in DIR: the removal is ordered, the site stops by itself, its "
                    + "PostgreSQL is stopped and it leaves the configuration (its files stay).")
    static final class RemoveSite implements Callable<Integer> {
        @Option(names = "--dir", required = true) Path dir;
        @Option(names = "--site", required = true) String site;

        @Override public Integer call() throws Exception {
            try {
                LocalCluster.removeSite(dir, site, System.out);
                return 0;
            } catch (IllegalArgumentException | IOException | java.sql.SQLException e) {
                System.err.println(e.getMessage());
                return 1;
            }
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true, description = "Show each site of the cluster in DIR.")
    static final class Status implements Callable<Integer> {
        @Option(names = "--dir", required = true) Path dir;

        @Override public Integer call() throws Exception {
            LocalCluster.status(dir).forEach(System.out::println);
            return 0;
        }
    }

    @Command(name = "check", mixinStandardHelpOptions = true,
            description = "Compare every user table across the replicas; exit 1 on any divergence.")
    static final class Check implements Callable<Integer> {
        @Option(names = "--dir", required = true) Path dir;
        @Option(names = "--database", defaultValue = "postgres") String database;

        @Override public Integer call() throws Exception {
            ClusterLayout.read(dir);
            Map<String, String> verdict = LocalCluster.check(dir, database, System.out);
            boolean same = true;
            System.out.printf("%-40s %s%n", "table", "verdict");
            for (Map.Entry<String, String> e : verdict.entrySet()) {
                System.out.printf("%-40s %s%n", e.getKey(), e.getValue());
                same &= e.getValue().equals("same");
            }
            System.out.println(verdict.isEmpty() ? "no user tables" : same ? "all replicas identical" : "REPLICAS DIFFER");
            return same ? 0 : 1;
        }
    }
}
