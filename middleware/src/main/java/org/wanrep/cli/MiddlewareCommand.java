package org.wanrep.cli;

import org.wanrep.config.Config;
import org.wanrep.site.Site;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

@Command(name = "middleware", mixinStandardHelpOptions = true,
        description = "Run one wanrep site: the proxy in front of this site's PostgreSQL replica.")
public final class MiddlewareCommand implements Callable<Integer> {
    @Option(names = "--config", required = true, description = "configuration file (YAML or properties)")
    Path config;

    @Option(names = "--site", required = true, description = "this site's name (one of the configured sites)")
    String site;

    @Option(names = "--set", description = "override a setting, key=value (repeatable)")
    List<String> overrides = new ArrayList<>();

    @Option(names = "--join-timeout-s", defaultValue = "120", description = "how long to wait for a majority of sites (default: ${DEFAULT-VALUE})")
    int joinTimeoutS;

    /** One site on its own, without the rest of the command line: how {@code cluster up} starts each site's process. */
    public static void main(String[] args) {
        System.setProperty("java.net.preferIPv4Stack", "true");
        System.exit(new CommandLine(new MiddlewareCommand()).execute(args));
    }

    @Override public Integer call() throws Exception {
        Config c = Config.load(config, overrides);
        System.out.printf("wanrep site %s: joining the group (waiting for a majority of %s)...%n", site, Site.sites(c));
        Site s;
        try {
            s = Site.start(c, site, Duration.ofSeconds(joinTimeoutS));
        } catch (Site.SiteStoppedException e) {
            System.err.printf("wanrep site %s: %s%n", site, e.getMessage());
            return 3;
        }
        System.out.printf("wanrep site %s: ready, clients connect to port %d%n", site, s.proxyPort());
        CountDownLatch exited = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            s.close();
            try {
                exited.await();   // let main print and exit
            } catch (InterruptedException ignored) {
                Thread.currentThread().interrupt();
            }
        });
        Runtime.getRuntime().addShutdownHook(hook);
        String reason = s.awaitStopped();
        exited.countDown();
        if (reason != null && s.removed()) {
            System.out.printf("wanrep site %s: %s%n", site, reason);
            return 0;
        }
        if (reason != null) {
            // stopped by itself (fail-stop): the process ends too, so nothing looks alive that serves nothing
            System.err.printf("wanrep site %s stopped: %s%n", site, reason);
            return 3;
        }
        return 0;
    }
}
