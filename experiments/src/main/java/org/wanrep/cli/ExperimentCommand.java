package org.wanrep.cli;

import org.wanrep.experiments.Experiment;
import org.wanrep.experiments.ExperimentFiles;
import org.wanrep.experiments.ExperimentRunner;
import org.wanrep.experiments.Experiments;
import org.wanrep.experiments.Finding;
import org.wanrep.experiments.Results;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

@Command(name = "experiment", mixinStandardHelpOptions = true,
        description = "The study's experiments, one per figure: 'experiment list' names them, 'experiment run NAME|all [--quick]' runs one or all.",
        subcommands = {ExperimentCommand.ListCommand.class, ExperimentCommand.RunCommand.class})
public final class ExperimentCommand implements Runnable {
    @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;

    @Override public void run() { spec.commandLine().usage(System.out); }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "Every experiment: what it compares, its points, and how long full and quick runs take.")
    static final class ListCommand implements Callable<Integer> {
        @Override public Integer call() {
            System.out.printf("%-12s %-9s %-9s %s%n", "name", "quick", "full", "what");
            for (String n : Experiments.names()) {
                Experiment q = Experiments.get(n, true), f = Experiments.get(n, false);
                System.out.printf("%-12s %-9s %-9s %s: %s%n", n, "~" + ExperimentRunner.duration(q.estimatedSeconds()), "~" + ExperimentRunner.duration(f.estimatedSeconds()),
                        f.study(), f.title());
                System.out.printf("%-32s setups %s; sites %s; loads %s tps (quick %s)%n", "", f.setups().stream().map(Experiment.Setup::id).toList(), f.siteCounts(),
                        f.loads().stream().map(Finding::num).toList(), q.loads().stream().map(Finding::num).toList());
            }
            System.out.println("\nrun one: ./wanrep experiment run NAME [--quick]; all of them: ./wanrep experiment run all [--quick]");
            return 0;
        }
    }

    @Command(name = "run", mixinStandardHelpOptions = true,
            description = "Runs experiments: for each point an in-process cluster with the point's configuration, the synthetic workload, then CSV, JSON, "
                    + "PNG plots and report.md (the study's findings beside ours) in OUT/NAME/.")
    static final class RunCommand implements Callable<Integer> {
        @Parameters(arity = "1..*", paramLabel = "NAME", description = "experiment names (see 'experiment list'), or all") List<String> names;
        @Option(names = "--quick", description = "fewer loads and transactions: about five minutes per experiment on two cores") boolean quick;
        @Option(names = "--out", paramLabel = "DIR", defaultValue = "runs/experiments", description = "output directory (default: ${DEFAULT-VALUE})") Path out;
        @Option(names = "--seed", paramLabel = "S", defaultValue = "1", description = "workload seed, the same at every point (default: ${DEFAULT-VALUE})") long seed;
        @Option(names = "--transactions", paramLabel = "N", description = "transactions per site and point instead of the definition's (800 full)") Integer transactions;
        @Option(names = "--progress-seconds", paramLabel = "S", defaultValue = "10", description = "progress line interval within a point (default: ${DEFAULT-VALUE})") int progress;

        @Override public Integer call() throws Exception {
            List<Experiment> es = new ArrayList<>();
            for (String n : names) {
                if (n.equals("all")) es.addAll(Experiments.all(quick));
                else es.add(Experiments.get(n, quick));
            }
            if (transactions != null) es.replaceAll(e -> e.withTransactionsPerSite(transactions));
            double est = es.stream().mapToDouble(Experiment::estimatedSeconds).sum();
            System.out.printf("running %s (%s): about %s%n", es.stream().map(Experiment::name).toList(), quick ? "quick" : "full", ExperimentRunner.duration(est));
            ExperimentRunner runner = new ExperimentRunner(new ExperimentRunner.Options(out, seed, org.wanrep.emulator.EmulatorConfig.DEFAULT_CONNECTIONS,
                    Duration.ofSeconds(progress), ExperimentRunner.ATTEMPTS), System.out);
            StringBuilder summary = new StringBuilder("# Experiments: the study's findings beside ours\n\n");
            boolean consistent = true;
            for (Experiment e : es) {
                Results r = runner.run(e);
                consistent &= r.checks().stream().allMatch(c -> c.same() || c.verdict().startsWith("not run"));
                List<Finding.Evaluation> ev = ExperimentFiles.evaluate(r);
                summary.append("## ").append(e.name()).append(" (").append(e.variant()).append("): ").append(e.title()).append("\n\n")
                        .append("[report](").append(e.name()).append("/report.md), ").append(ExperimentRunner.duration(r.seconds())).append("\n\n");
                System.out.printf("%nfindings of %s:%n", e.name());
                for (int i = 0; i < ev.size(); i++) {
                    String line = ExperimentFiles.findingLine(e.findings().get(i), ev.get(i));
                    summary.append("- ").append(line).append('\n');
                    System.out.printf(Locale.ROOT, "  %-12s %s%n", ev.get(i).verdict().label(), e.findings().get(i).study());
                }
                summary.append('\n');
            }
            if (es.size() > 1) {
                Files.createDirectories(out);
                Files.writeString(out.resolve("summary.md"), summary);
                System.out.printf("%nsummary: %s%n", out.resolve("summary.md"));
            }
            if (!consistent) System.out.println("REPLICAS DIFFER in some cluster: see the reports' Replicas sections");
            return consistent ? 0 : 1;
        }
    }
}
