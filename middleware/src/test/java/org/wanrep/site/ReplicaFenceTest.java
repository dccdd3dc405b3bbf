package org.wanrep.site;

import org.junit.jupiter.api.Test;
import org.wanrep.backend.BackendTarget;
import org.wanrep.pg.LocalPostgres;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a site's earlier incarnation can leave in its replica (real PostgreSQL): a backend running a query string
 * that ends in COMMIT, waiting on the rows of a block left prepared. Once the restarting site resolves that block, the
 * backend would commit behind the site's back; ended first, it commits nothing.
 */
class ReplicaFenceTest {
    @Test
    void aSessionLeftWaitingOnAPreparedBlockNeverCommitsOnceFenced() throws Exception {
        try (LocalPostgres pg = LocalPostgres.startTemporary()) {
            BackendTarget target = new BackendTarget(pg.host(), pg.port(), "postgres", "");
            try (Connection c = pg.connect(); Statement st = c.createStatement()) {
                st.execute("CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL)");
                st.execute("INSERT INTO t VALUES (1, 0)");
                // the block left prepared, holding the row
                st.execute("BEGIN");
                st.execute("UPDATE t SET v = 1 WHERE id = 1");
                st.execute("PREPARE TRANSACTION 'wanrep:left'");
            }
            // the earlier incarnation's backend: its whole string, COMMIT included, sent; it waits for the row
            Connection orphan = DriverManager.getConnection(pg.jdbcUrl("postgres") + "?preferQueryMode=simple", "postgres", "");
            CompletableFuture<Object> run = CompletableFuture.supplyAsync(() -> {
                try (Statement st = orphan.createStatement()) {
                    st.execute("BEGIN; UPDATE t SET v = v + 10 WHERE id = 1; COMMIT");
                    return "committed";
                } catch (Exception e) {
                    return e;
                }
            }, r -> Thread.ofPlatform().start(r));
            try (Connection c = pg.connect(); Statement st = c.createStatement()) {
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (System.nanoTime() < until) {
                    try (ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")) {
                        rs.next();
                        if (rs.getLong(1) == 1) break;
                    }
                    Thread.sleep(10);
                }
            }

            java.util.List<Integer> ended = ReplicaFence.endOtherSessions(target, Duration.ofSeconds(10));
            assertThat(ended).as("the waiting backend, at least").isNotEmpty();

            // the restart resolves the prepared block: the row is free, and nothing is left to take it
            try (Connection c = pg.connect(); Statement st = c.createStatement()) {
                st.execute("ROLLBACK PREPARED 'wanrep:left'");
            }
            assertThat(run.get(10, TimeUnit.SECONDS)).as("the fenced backend's run").isInstanceOf(java.sql.SQLException.class);
            try (Connection c = pg.connect(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT v FROM t")) {
                rs.next();
                assertThat(rs.getInt(1)).as("what the replica has").isZero();
            }
            // and a fence with nothing to end ends nothing
            assertThat(ReplicaFence.endOtherSessions(target, Duration.ofSeconds(1))).isEmpty();
            orphan.close();
        }
    }
}
