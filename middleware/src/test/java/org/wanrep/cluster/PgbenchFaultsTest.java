package org.wanrep.cluster;

import org.junit.jupiter.api.Test;
import org.wanrep.config.Config;
import org.wanrep.frontend.ClientTools;
import org.wanrep.frontend.ClientTools.Result;

import java.io.PrintStream;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * pgbench's builtin tpcb-like, unchanged, as interactive blocks (certified) from every site of a cluster of real
 * processes, while faults hit mid-load: kill -9 of one site's middleware and its restart (new pgbench clients connect
 * to it once it serves again), then a pause (SIGSTOP, SIGCONT) of another's, then kill -9 of that one's PostgreSQL
 * (its middleware stops; start-site recovers the replica and resolves the blocks left prepared in it from the total
 * order). Afterwards every replica satisfies
 * pgbench's own invariant (accounts, tellers, branches and the history's deltas add up), the replicas are identical,
 * and no acknowledged transaction is lost: each replica's history holds at least one row per transaction pgbench
 * counted as processed, and at most one more per client that pgbench lost mid-transaction (its outcome unknown).
 */
class PgbenchFaultsTest {
    @Test
    void tpcbLikeFromEverySiteThroughACrashAndAPauseKeepsTheInvariantAndEveryAcknowledgedCommit() throws Exception {
        Path dir = ClusterProcesses.directory("wanrep-pgbench-faults");
        PrintStream quiet = new PrintStream(java.io.OutputStream.nullOutputStream());
        ClusterLayout layout = LocalCluster.up(dir, 3, "lan", Config.build(Map.of("delivery", "safe", "blocks", "certify"), List.of()), quiet);
        try {
            List<ClusterLayout.SiteEntry> sites = layout.sites();
            Result init = ClientTools.pgbench(sites.get(0).proxy_port(), "-i", "-s", "1", "-q");
            assertThat(init.exit()).as(init.output()).isZero();

            // -n: pgbench's vacuum step truncates pgbench_history, which would wipe the other sites' runs' rows
            for (ClusterLayout.SiteEntry s : sites) awaitServing(s.proxy_port());
            List<CompletableFuture<Result>> runs = new ArrayList<>();
            for (ClusterLayout.SiteEntry s : sites) runs.add(pgbenchAsync(s.proxy_port(), 20));
            Thread.sleep(4000);

            // kill -9 of site c's middleware: its clients lose their connections (pgbench aborts them)
            LocalCluster.stopSite(dir, "c", true, System.out);
            Thread.sleep(2000);
            ClusterLayout.SiteEntry c = LocalCluster.startSite(dir, "c", quiet);
            awaitServing(c.proxy_port());
            runs.add(pgbenchAsync(c.proxy_port(), 6));   // new clients at the restarted site

            // a pause of site b's middleware, shorter than the failure detector's timeout: the others go on
            long b = ClusterLayout.read(dir).sites().get(1).middleware_pid();
            ClusterProcesses.signal("STOP", b);
            Thread.sleep(3000);
            ClusterProcesses.signal("CONT", b);
            Thread.sleep(1000);

            // kill -9 of site b's postmaster mid-load: its middleware stops (it cannot be sure of its replica), blocks
            // prepared there are left in the replica; start-site recovers PostgreSQL, resolves each from the total order
            ClusterLayout.SiteEntry b1 = ClusterLayout.read(dir).sites().get(1);
            ClusterProcesses.signal("KILL", ClusterProcesses.postmasterPid(b1));
            ProcessHandle mw = ProcessHandle.of(b1.middleware_pid()).orElseThrow();
            assertThat(mw.onExit().get(30, TimeUnit.SECONDS).isAlive()).as("b's middleware stops with its replica").isFalse();
            ClusterLayout.SiteEntry b2 = LocalCluster.startSite(dir, "b", quiet);
            awaitServing(b2.proxy_port());
            runs.add(pgbenchAsync(b2.proxy_port(), 4));   // new clients at b again

            long processed = 0, lostClients = 0;
            for (CompletableFuture<Result> f : runs) {
                Result r = f.get(120, TimeUnit.SECONDS);
                processed += ClientTools.processed(r);
                lostClients += aborted(r.output());
                System.out.println("PgbenchFaultsTest: pgbench exit " + r.exit() + ", " + firstLine(r.output(), "number of transactions actually processed"));
            }
            assertThat(processed).isPositive();

            awaitSame(dir, quiet);
            for (ClusterLayout.SiteEntry e : ClusterLayout.read(dir).sites()) {
                try (Connection x = DriverManager.getConnection("jdbc:postgresql://" + e.pg_host() + ":" + e.pg_port() + "/postgres", ClusterProcesses.props());
                     Statement st = x.createStatement();
                     ResultSet r = st.executeQuery("SELECT (SELECT sum(abalance) FROM pgbench_accounts), (SELECT sum(tbalance) FROM pgbench_tellers),"
                             + " (SELECT sum(bbalance) FROM pgbench_branches), (SELECT coalesce(sum(delta), 0) FROM pgbench_history),"
                             + " (SELECT count(*) FROM pgbench_history)")) {
                    r.next();
                    long accounts = r.getLong(1);
                    assertThat(List.of(r.getLong(2), r.getLong(3), r.getLong(4))).as("balances and history at site " + e.name()).containsOnly(accounts);
                    assertThat(r.getLong(5)).as("site %s holds every acknowledged transaction", e.name()).isGreaterThanOrEqualTo(processed);
                    assertThat(r.getLong(5)).as("site %s: at most one unknown outcome per client lost mid-transaction", e.name())
                            .isLessThanOrEqualTo(processed + lostClients);
                }
            }
            System.out.printf("PgbenchFaultsTest: %d transactions acknowledged, %d clients lost, invariant and replicas kept%n", processed, lostClients);
        } finally {
            LocalCluster.down(dir, quiet);
        }
    }

    /** The replicas agree once every site finished what was ordered (a restarted site may still be replaying). */
    private static void awaitSame(Path dir, PrintStream quiet) throws Exception {
        Map<String, String> verdicts = Map.of();
        for (int i = 0; i < 60; i++) {
            verdicts = LocalCluster.check(dir, "postgres", quiet);
            if (!verdicts.isEmpty() && verdicts.values().stream().allMatch("same"::equals)) return;
            Thread.sleep(1000);
        }
        assertThat(verdicts.values()).as("replicas compared: %s", verdicts).isNotEmpty().allMatch("same"::equals);
    }

    private static void awaitServing(int port) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < end) {
            try (Connection x = ClusterProcesses.connect(port); Statement st = x.createStatement()) {
                st.executeQuery("SELECT 1").close();
                return;
            } catch (SQLException e) {
                Thread.sleep(200);   // 57P03 while it catches up
            }
        }
        throw new AssertionError("the restarted site did not serve within 60 s");
    }

    private static CompletableFuture<Result> pgbenchAsync(int port, int seconds) {
        // a thread of its own: the common pool may run one task at a time on two cores, the runs would not overlap
        CompletableFuture<Result> f = new CompletableFuture<>();
        Thread.ofPlatform().name("pgbench-" + port).start(() -> {
            try {
                f.complete(ClientTools.pgbench(port, "-n", "-b", "tpcb-like", "-c", "2", "-T", Integer.toString(seconds), "--max-tries", "1000"));
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        });
        return f;
    }

    /** Clients pgbench gave up on: each may have lost a transaction whose outcome it never heard. */
    private static long aborted(String output) {
        Matcher m = Pattern.compile("(?m)^pgbench: error: client \\d+ (script \\d+ )?aborted").matcher(output);
        long n = 0;
        while (m.find()) n++;
        return n;
    }

    private static String firstLine(String output, String prefix) {
        for (String l : output.split("\n")) if (l.startsWith(prefix)) return l;
        return "(no '" + prefix + "' line)";
    }


}
