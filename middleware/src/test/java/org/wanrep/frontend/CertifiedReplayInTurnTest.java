package org.wanrep.frontend;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.wanrep.exec.WireTxnExecutor;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Another site's certified blocks replayed from their statement logs ({@code blocks.replay}). In turn (the default),
 * a replay runs once everything ordered before it has finished at the replica, its COMMIT in the same query, so no
 * replay's COMMIT goes on its own. Overlapped, a replay runs as soon as granted: one whose predecessor is held up at
 * the replica (here by a row lock taken directly in site b's PostgreSQL) finishes first and sends COMMIT alone once its
 * turn comes. Either way, with pgbench's eight clients after it, pgbench's invariant holds at every replica, the history
 * has one row per acknowledged transaction, and the replicas are identical.
 */
class CertifiedReplayInTurnTest {
    @ParameterizedTest(name = "blocks.replay {0}")
    @ValueSource(strings = {"in-turn", "overlapped"})
    void aReplayInTurnCommitsInItsOwnQuery(String replay) throws Exception {
        try (TestCluster c = new TestCluster(List.of("a", "b"), "lan", Map.of("delivery", "safe", "blocks", "certify", "blocks.replay", replay))) {
            try (Connection x = c.connect(0); Statement st = x.createStatement()) {
                st.execute("CREATE TABLE s (id int PRIMARY KEY, v int); CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO s VALUES (1, 0); INSERT INTO t VALUES (1, 0)");
            }
            c.awaitQuiescent();
            long held0 = WireTxnExecutor.commitsAlone();
            try (Connection lock = c.pgs.get(1).connect(); Statement ls = lock.createStatement()) {
                // site b's replay of the first block waits in PostgreSQL on this row; the second block writes another table
                lock.setAutoCommit(false);
                ls.executeQuery("SELECT v FROM s WHERE id = 1 FOR UPDATE").close();
                // two sessions: one session's blocks are ordered after each other at every site (its order lock)
                try (Connection x = c.connect(0); Connection y = c.connect(0); Statement sx = x.createStatement(); Statement sy = y.createStatement()) {
                    x.setAutoCommit(false);
                    y.setAutoCommit(false);
                    sx.executeUpdate("UPDATE s SET v = v + 1 WHERE id = 1");
                    x.commit();
                    sy.executeUpdate("UPDATE t SET v = v + 1 WHERE id = 1");
                    y.commit();
                }
                Thread.sleep(1500);   // overlapped: the second replay runs meanwhile and waits for its turn, executed
                lock.commit();
            }
            c.awaitQuiescent();
            long held = WireTxnExecutor.commitsAlone() - held0;
            System.out.printf("blocks.replay %s: %d COMMITs sent alone behind a held-up replay%n", replay, held);
            if (replay.equals("in-turn")) assertThat(held).as("COMMITs of replays sent on their own").isZero();
            else assertThat(held).as("the second replay ran before its turn, then sent COMMIT alone").isEqualTo(1);
            assertThat(c.check().values()).as("replicas compared").containsOnly("same");

            ClientTools.Result init = ClientTools.pgbench(c.proxyPort(0), "-i", "-s", "1", "-q");
            assertThat(init.exit()).as(init.output()).isZero();
            c.awaitQuiescent();
            long alone0 = WireTxnExecutor.commitsAlone();
            ClientTools.Result run = ClientTools.pgbench(c.proxyPort(0), "-n", "-c", "8", "-j", "2", "-T", "4", "--max-tries", "1000", "-b", "tpcb-like");
            assertThat(run.exit()).as(run.output()).isZero();
            c.awaitQuiescent();
            long alone = WireTxnExecutor.commitsAlone() - alone0;
            long processed = ClientTools.processed(run);
            long replayed;
            try (Connection x = c.connect(1); Statement st = x.createStatement(); ResultSet r = st.executeQuery("SHOW wanrep.certification")) {
                r.next();
                replayed = r.getLong("logs_replayed");
            }
            System.out.printf("blocks.replay %s: %d blocks, %d replayed at b, %d COMMITs sent alone%n", replay, processed, replayed, alone);
            assertThat(replayed).as("blocks replayed from their log at site b").isGreaterThanOrEqualTo(processed);
            if (replay.equals("in-turn")) assertThat(alone).as("COMMITs of replays sent on their own").isZero();
            assertThat(c.check().values()).as("replicas compared").containsOnly("same");
            c.assertPgbenchInvariant(processed);
        }
    }

    /**
     * A replay whose turn comes when a local client's update commits does not run on that client's thread: the client
     * has its answer while the replay waits in PostgreSQL (on a row held by a direct session at site b).
     */
    @org.junit.jupiter.api.Test
    void aReplayInTurnDoesNotHoldUpTheAnswerOfTheUpdateBeforeIt() throws Exception {
        try (TestCluster c = new TestCluster(List.of("a", "b"), "lan", Map.of("delivery", "safe", "blocks", "certify"))) {
            try (Connection x = c.connect(0); Statement st = x.createStatement()) {
                st.execute("CREATE TABLE s (id int PRIMARY KEY, v int); CREATE TABLE u (id int PRIMARY KEY, v int); INSERT INTO s VALUES (1, 0); INSERT INTO u VALUES (1, 0)");
            }
            c.awaitQuiescent();
            try (Connection lockU = c.pgs.get(1).connect(); Connection lockS = c.pgs.get(1).connect();
                 Statement lu = lockU.createStatement(); Statement ls = lockS.createStatement()) {
                lockU.setAutoCommit(false);
                lockS.setAutoCommit(false);
                lu.executeQuery("SELECT v FROM u WHERE id = 1 FOR UPDATE").close();
                ls.executeQuery("SELECT v FROM s WHERE id = 1 FOR UPDATE").close();
                // an update by a client of site b, held up at b by the row lock on u
                java.util.concurrent.CompletableFuture<Long> answered = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    try (Connection y = c.connect(1); Statement sy = y.createStatement()) {
                        sy.executeUpdate("UPDATE u SET v = v + 1 WHERE id = 1");
                        return System.nanoTime();
                    } catch (java.sql.SQLException e) {
                        throw new RuntimeException(e);
                    }
                });
                Thread.sleep(1000);   // ordered by now; the block below comes after it
                try (Connection x = c.connect(0); Statement sx = x.createStatement()) {
                    x.setAutoCommit(false);
                    sx.executeUpdate("UPDATE s SET v = v + 1 WHERE id = 1");
                    x.commit();
                }
                Thread.sleep(500);   // the block's replay at b is granted and waits for its turn, after the update
                long released = System.nanoTime();
                lockU.commit();   // the update commits at b; the replay's turn comes, and it waits on s's row
                long at = answered.get(30, java.util.concurrent.TimeUnit.SECONDS);
                System.out.printf("the update was answered %.0f ms after its row was free%n", (at - released) / 1e6);
                assertThat(at - released).as("ns from the update's row freed to its answer, the replay still waiting").isLessThan(5_000_000_000L);
                lockS.commit();
            }
            c.awaitQuiescent();
            assertThat(c.check().values()).as("replicas compared").containsOnly("same");
        }
    }
}
