package org.wanrep.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code wanrep} command line. */
@Command(name = "wanrep", mixinStandardHelpOptions = true, version = "wanrep 0.1.0",
        description = "Consistent PostgreSQL replication middleware for wide-area networks.",
        subcommands = {DemoCommand.class, MiddlewareCommand.class, ClusterCommand.class, ProxyBenchCommand.class, WanBenchCommand.class, GcsBenchCommand.class, GcsTargetsCommand.class,
                CommandLine.HelpCommand.class})
public final class Main implements Runnable {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override public void run() {
        spec.commandLine().usage(System.out);
    }

    public static void main(String[] args) {
        System.setProperty("java.net.preferIPv4Stack", "true");
        int code = new CommandLine(new Main()).setCaseInsensitiveEnumValuesAllowed(true).execute(args);
        System.exit(code);
    }
}
