package org.wanrep.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.SQLException;

/**
 * The {@code wanrep} command line, assembled here from the middleware's commands (one site, a local
 * cluster, group-communication benchmarks) and the experiments' (demo, client emulators, benchmarks).
 */
@Command(name = "wanrep", mixinStandardHelpOptions = true, version = "wanrep 0.1.0",
        description = "Consistent PostgreSQL replication middleware for wide-area networks.",
        subcommands = {DemoCommand.class, EmulateCommand.class, ExperimentCommand.class, MiddlewareCommand.class, ClusterCommand.class, ProxyBenchCommand.class, PeerBenchCommand.class,
                WanBenchCommand.class, CertifyBenchCommand.class, WriteSetBenchCommand.class, CaptureBenchCommand.class, ApplyBenchCommand.class, EmulatorBenchCommand.class,
                GcsBenchCommand.class, GcsTargetsCommand.class, HistoryCheckCommand.class, LockBenchCommand.class, RejoinBenchCommand.class, PauseBenchCommand.class, AddSiteBenchCommand.class, CommandLine.HelpCommand.class})
public final class Main implements Runnable {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override public void run() {
        spec.commandLine().usage(System.out);
    }

    public static void main(String[] args) {
        System.setProperty("java.net.preferIPv4Stack", "true");
        System.exit(commandLine().execute(args));
    }

    /** The command line, with a bad setting or an unreachable server reported in one line rather than a stack trace. */
    public static CommandLine commandLine() {
        return new CommandLine(new Main()).setCaseInsensitiveEnumValuesAllowed(true)
                .setExecutionExceptionHandler((e, cmd, parsed) -> {
                    if (!(e instanceof IllegalArgumentException || e instanceof SQLException || e instanceof IOException || e instanceof UncheckedIOException))
                        throw e;
                    cmd.getErr().println("wanrep " + cmd.getCommandName() + ": " + e.getMessage());
                    return 2;
                });
    }
}
