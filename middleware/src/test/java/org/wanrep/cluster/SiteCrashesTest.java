package org.wanrep.cluster;

import org.junit.jupiter.api.Test;
import org.wanrep.config.Config;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Crashes of real processes as `cluster up` runs them, under load from two sites: kill -9 of a site's
 * middleware and `cluster start-site` (it catches up from the others' logs), then kill -9 of the
 * PostgreSQL postmaster at the sequencer's site (its middleware stops on the lost replica; start-site
 * starts PostgreSQL, which recovers, and the middleware, which finds its position in the replica and
 * catches up). A restarted site never answers with fewer rows than were acknowledged before it started;
 * at the end every replica is identical and holds every acknowledged insert.
 */
class SiteCrashesTest {
    @Test
    void killedMiddlewareAndKilledPostgresComeBackWithEveryAcknowledgedCommit() throws Exception {
        Path dir = ClusterProcesses.directory("wanrep-crashes");
        PrintStream quiet = new PrintStream(java.io.OutputStream.nullOutputStream());
        ClusterLayout layout = LocalCluster.up(dir, 3, "lan", Config.build(Map.of("delivery", "safe"), List.of()), quiet);
        AtomicBoolean stop = new AtomicBoolean();
        Set<String> acked = ConcurrentHashMap.newKeySet();
        try {
            ClusterLayout.SiteEntry a = layout.sites().get(0), b = layout.sites().get(1);
            try (Connection x = ClusterProcesses.connect(a.proxy_port()); Statement st = x.createStatement()) {
                st.execute("CREATE TABLE t (w text, n int, PRIMARY KEY (w, n))");
            }
            List<Thread> writers = List.of(writer("a", a.proxy_port(), stop, acked), writer("b", b.proxy_port(), stop, acked));
            Thread.sleep(1500);

            // 1. kill -9 of site c's middleware mid-load, then start-site
            LocalCluster.stopSite(dir, "c", true, quiet);
            Thread.sleep(2000);
            restartAndCheck(dir, "c", acked);
            String cLog = Files.readString(Path.of(entry(dir, "c").log()));
            assertThat(cLog.split("wanrep site c: ready", -1)).as("c's log keeps the killed run's lines before the new run's").hasSize(3);

            // 2. kill -9 of the postmaster at site a, whose middleware orders (the first site is the sequencer's)
            ClusterLayout.SiteEntry a1 = entry(dir, "a");
            ClusterProcesses.signal("KILL", ClusterProcesses.postmasterPid(a1));
            // its middleware stops: it cannot be sure of its replica any more (fail-stop, exit status 3)
            ProcessHandle mw = ProcessHandle.of(a1.middleware_pid()).orElseThrow();
            assertThat(mw.onExit().get(30, java.util.concurrent.TimeUnit.SECONDS).isAlive()).isFalse();
            int before = acked.size();
            Thread.sleep(2000);
            assertThat(acked.size()).as("b went on without a").isGreaterThan(before);
            restartAndCheck(dir, "a", acked);
            Thread.sleep(1000);

            stop.set(true);
            for (Thread w : writers) w.join(30_000);
            Map<String, String> verdicts = LocalCluster.check(dir, "postgres", quiet);
            assertThat(verdicts).isNotEmpty();
            assertThat(verdicts.values()).allMatch("same"::equals);
            for (ClusterLayout.SiteEntry e : ClusterLayout.read(dir).sites()) {
                Set<String> rows = new java.util.HashSet<>();
                try (Connection x = DriverManager.getConnection("jdbc:postgresql://" + e.pg_host() + ":" + e.pg_port() + "/postgres", ClusterProcesses.props());
                     Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SELECT w, n FROM t")) {
                    while (rs.next()) rows.add(rs.getString(1) + rs.getInt(2));
                }
                assertThat(rows).as("site %s holds every acknowledged insert", e.name()).containsAll(acked);
            }
            System.out.printf("SiteCrashesTest: %d inserts acknowledged, all at every replica%n", acked.size());
        } finally {
            stop.set(true);
            LocalCluster.down(dir, quiet);
        }
    }

    /**
     * Starts the site again; from then on each of its answers counts at least the rows acknowledged before
     * it started, and it serves again within a minute.
     */
    private static void restartAndCheck(Path dir, String site, Set<String> acked) throws Exception {
        int before = acked.size();
        ClusterLayout.SiteEntry e = LocalCluster.startSite(dir, site, new PrintStream(java.io.OutputStream.nullOutputStream()));
        long end = System.nanoTime() + 60_000_000_000L;
        while (System.nanoTime() < end) {
            try (Connection x = ClusterProcesses.connect(e.proxy_port()); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM t")) {
                rs.next();
                assertThat(rs.getInt(1)).as("site %s answered from a stale replica", site).isGreaterThanOrEqualTo(before);
                return;
            } catch (SQLException ex) {
                Thread.sleep(100);   // 57P03 while it catches up
            }
        }
        throw new AssertionError("site " + site + " did not serve again within 60 s of its start");
    }

    private static Thread writer(String w, int port, AtomicBoolean stop, Set<String> acked) {
        return Thread.ofPlatform().name("writer-" + w).start(() -> {
            int n = 0;
            while (!stop.get()) {
                try (Connection x = ClusterProcesses.connect(port); Statement st = x.createStatement()) {
                    while (!stop.get()) {
                        n++;
                        st.execute("INSERT INTO t VALUES ('" + w + "', " + n + ")");
                        acked.add(w + n);
                    }
                } catch (SQLException e) {
                    try {
                        Thread.sleep(100);   // its site is down or catching up; the insert's outcome is unknown, never counted
                    } catch (InterruptedException ie) {
                        return;
                    }
                }
            }
        });
    }

    private static ClusterLayout.SiteEntry entry(Path dir, String site) throws Exception {
        for (ClusterLayout.SiteEntry e : ClusterLayout.read(dir).sites()) if (e.name().equals(site)) return e;
        throw new AssertionError("no site " + site);
    }



}
