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
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A site paused (SIGSTOP) long enough for the others to exclude it and commit without it must not
 * answer from its stale replica once it resumes (it served stale reads for ~11 s before): its lease
 * ran out while it was stopped, so it refuses every request until it has caught up from the others'
 * logs, then serves with every acknowledged row. Real processes, as `cluster up` runs them.
 */
class PausedSiteTest {
    @Test
    void aResumedSiteAnswersNothingFromItsStaleReplica() throws Exception {
        // readable by the postgres user, which initdb runs as when the tests run as root
        Path dir = ClusterProcesses.directory("wanrep-paused");
        PrintStream quiet = new PrintStream(java.io.OutputStream.nullOutputStream());
        ClusterLayout layout = LocalCluster.up(dir, 3, "lan", Config.build(java.util.Map.of("delivery", "safe"), List.of()), quiet);
        try {
            // its sites share a generated secret only the owner can read, so the view change below runs encrypted
            assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("gcs.secret")))).isEqualTo("rw-------");
            assertThat(Files.readString(ClusterLayout.configFile(dir))).contains("gcs.secret_file=" + dir.toAbsolutePath().resolve("gcs.secret"));
            ClusterLayout.SiteEntry a = layout.sites().get(0), c = layout.sites().get(2);
            try (Connection x = connect(a); Statement st = x.createStatement()) {
                st.execute("CREATE TABLE t (id serial PRIMARY KEY, v int)");
            }
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger acked = new AtomicInteger();
            Thread writer = Thread.ofPlatform().start(() -> {
                try (Connection x = connect(a); Statement st = x.createStatement()) {
                    while (!stop.get()) {
                        try {
                            st.execute("INSERT INTO t (v) VALUES (1)");
                            acked.incrementAndGet();
                        } catch (SQLException e) {
                            Thread.sleep(50);   // the view change when c is excluded
                        }
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            Thread.sleep(1500);
            ClusterProcesses.signal("STOP", c.middleware_pid());
            Thread.sleep(14_000);   // beyond the failure detector (8 s) and the verification: c is excluded
            int before = acked.get();
            assertThat(before).as("the majority went on while c was paused").isGreaterThan(0);
            ClusterProcesses.signal("CONT", c.middleware_pid());
            // from the moment it resumes: every request at c fails (or finds c gone) until it has caught up
            // from the others' logs; an answer then has every row acknowledged before it resumed
            long end = System.nanoTime() + 40_000_000_000L;
            int refused = 0;
            boolean served = false;
            while (!served && System.nanoTime() < end) {
                try (Connection x = connect(c); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM t")) {
                    rs.next();
                    assertThat(rs.getInt(1)).as("site c answered from its stale replica").isGreaterThanOrEqualTo(before);
                    served = true;
                } catch (SQLException e) {
                    refused++;
                    Thread.sleep(100);
                }
            }
            assertThat(refused).isGreaterThan(0);
            assertThat(served).as("site c catches up and serves again").isTrue();
            System.out.printf("site c served again %.1f s after it resumed (%d requests refused meanwhile)%n",
                    (System.nanoTime() - (end - 40_000_000_000L)) / 1e9, refused);
            stop.set(true);
            writer.join();
        } finally {
            LocalCluster.down(dir, quiet);
        }
    }

    private static Connection connect(ClusterLayout.SiteEntry e) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", "postgres");
        p.setProperty("connectTimeout", "5");
        p.setProperty("socketTimeout", "20");
        return DriverManager.getConnection("jdbc:postgresql://" + e.proxy_host() + ":" + e.proxy_port() + "/postgres", p);
    }

}
