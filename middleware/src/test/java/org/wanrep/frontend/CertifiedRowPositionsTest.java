package org.wanrep.frontend;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A certified block begun by a plain BEGIN (psql, pgbench, psycopg) whose first statement writes runs at READ COMMITTED;
 * one whose first statement reads keeps REPEATABLE READ (it may stay read-only, and then commits uncertified on one
 * snapshot). In a certified block at READ COMMITTED, an UPDATE by key records the position at which it locked its row: a block that
 * waited for another block's row, or updates a row another site wrote after its snapshot (applied here before), goes
 * on with the newest version and commits, where it used to fail with 40001. A statement that read on its older snapshot
 * (a subquery), or a row the block read before, keeps the snapshot's position: those still abort, never lose an update.
 */
class CertifiedRowPositionsTest {
    private static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = new TestCluster(List.of("a", "b"), "lan", Map.of("delivery", "safe", "blocks", "certify"));
        try (Connection a = cluster.connect(0); Statement st = a.createStatement()) {
            st.execute("CREATE TABLE acc (id int PRIMARY KEY, bal int NOT NULL)");
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) cluster.close();
    }

    @BeforeEach
    void reset() throws Exception {
        try (Connection a = cluster.connect(0); Statement st = a.createStatement()) {
            st.execute("DELETE FROM acc");
            st.execute("INSERT INTO acc SELECT g, 100 FROM generate_series(1, 3) g");
        }
        cluster.awaitQuiescent();
    }

    @Test
    void aBlockThatWaitedForAnotherBlocksRowCommitsOnTheNewestVersion() throws Exception {
        try (Connection c1 = cluster.connect(0); Statement s1 = c1.createStatement();
             Connection c2 = cluster.connect(0); Statement s2 = c2.createStatement()) {
            begin(s1);
            begin(s2);
            s1.executeUpdate("UPDATE acc SET bal = bal + 1 WHERE id = 1");
            assertThat(balance(s2, 2)).isEqualTo(100);   // the second block's snapshot: before the first commits
            CompletableFuture<Integer> waiting = update(s2, "UPDATE acc SET bal = bal + 10 WHERE id = 1");
            Thread.sleep(200);
            assertThat(waiting).as("waits for the first block's row").isNotDone();
            commit(s1);
            assertThat(waiting.get(10, TimeUnit.SECONDS)).isEqualTo(1);
            commit(s2);   // repeatable read failed it with 40001; certification accepts its row's position
        }
        assertBalanceEverywhere(1, 111);
    }

    @Test
    void aPlainBeginWhoseFirstStatementWritesReadsCommitted() throws Exception {
        try (Connection c1 = cluster.connect(0, SIMPLE); Statement s1 = c1.createStatement();
             Connection c2 = cluster.connect(0, SIMPLE); Statement s2 = c2.createStatement()) {
            s1.execute("BEGIN");
            s1.executeUpdate("UPDATE acc SET bal = bal + 1 WHERE id = 1");
            s2.execute("BEGIN");
            CompletableFuture<Integer> waiting = update(s2, "UPDATE acc SET bal = bal + 10 WHERE id = 1");
            Thread.sleep(200);
            assertThat(waiting).as("waits for the first block's row").isNotDone();
            commit(s1);
            assertThat(waiting.get(10, TimeUnit.SECONDS)).as("repeatable read would fail it with 40001").isEqualTo(1);
            assertThat(isolation(s2)).isEqualTo("read committed");
            commit(s2);
        }
        assertBalanceEverywhere(1, 111);
    }

    @Test
    void aPlainBeginWhoseFirstStatementReadsKeepsOneSnapshot() throws Exception {
        try (Connection c1 = cluster.connect(0, SIMPLE); Statement s1 = c1.createStatement();
             Connection c2 = cluster.connect(0); Statement s2 = c2.createStatement()) {
            s1.execute("BEGIN");
            assertThat(balance(s1, 1)).isEqualTo(100);
            s2.executeUpdate("UPDATE acc SET bal = 200 WHERE id = 1");   // committed here meanwhile
            assertThat(balance(s1, 1)).as("the same snapshot: a read-only block commits without certification").isEqualTo(100);
            assertThat(isolation(s1)).isEqualTo("repeatable read");
            commit(s1);
        }
        assertBalanceEverywhere(1, 200);
    }

    @Test
    void aStatementThatReadOnItsOlderSnapshotStillAborts() throws Exception {
        try (Connection c1 = cluster.connect(0); Statement s1 = c1.createStatement();
             Connection c2 = cluster.connect(0); Statement s2 = c2.createStatement()) {
            begin(s1);
            begin(s2);
            s1.executeUpdate("UPDATE acc SET bal = bal + 1 WHERE id = 1");
            assertThat(balance(s2, 2)).isEqualTo(100);
            // the subquery reads 100 on the statement's snapshot while the row's newest version will be 101
            CompletableFuture<Integer> waiting = update(s2, "UPDATE acc SET bal = (SELECT bal FROM acc WHERE id = 1) + 10 WHERE id = 1");
            Thread.sleep(200);
            commit(s1);
            assertThat(waiting.get(10, TimeUnit.SECONDS)).isEqualTo(1);
            assertThatThrownBy(() -> commit(s2)).isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("40001"));
            rollback(s2);
        }
        assertBalanceEverywhere(1, 101);   // no lost update
    }

    @Test
    void anotherSitesUpdateAppliedBeforeTheRowWasLockedIsSeen() throws Exception {
        try (Connection a = cluster.connect(0); Statement sa = a.createStatement();
             Connection b = cluster.connect(1); Statement sb = b.createStatement()) {
            begin(sa);
            assertThat(balance(sa, 2)).isEqualTo(100);   // snapshot before b's update
            sb.executeUpdate("UPDATE acc SET bal = 500 WHERE id = 1");
            cluster.awaitQuiescent();   // applied at a
            assertThat(sa.executeUpdate("UPDATE acc SET bal = bal + 1 WHERE id = 1")).isEqualTo(1);
            commit(sa);
        }
        assertBalanceEverywhere(1, 501);
    }

    @Test
    void aRowTheBlockReadBeforeAnotherSiteWroteItAborts() throws Exception {
        try (Connection a = cluster.connect(0); Statement sa = a.createStatement();
             Connection b = cluster.connect(1); Statement sb = b.createStatement()) {
            begin(sa);
            int seen = balance(sa, 1);   // 100: the block's later write may depend on it
            sb.executeUpdate("UPDATE acc SET bal = 500 WHERE id = 1");
            cluster.awaitQuiescent();
            sa.executeUpdate("UPDATE acc SET bal = bal + 1 WHERE id = 1");
            sa.executeUpdate("UPDATE acc SET bal = " + (seen + 7) + " WHERE id = 2");
            assertThatThrownBy(() -> commit(sa)).isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("40001"));
            rollback(sa);
        }
        assertBalanceEverywhere(1, 500);
        assertBalanceEverywhere(2, 100);
    }

    /** pgjdbc's simple-query mode: BEGIN goes as a Query of its own, what psql and pgbench send. */
    private static final String SIMPLE = "preferQueryMode=simple";

    private static String isolation(Statement st) throws SQLException {
        try (ResultSet rs = st.executeQuery("SHOW transaction_isolation")) {
            assertThat(rs.next()).isTrue();
            return rs.getString(1);
        }
    }

    /** BEGIN ISOLATION LEVEL READ COMMITTED, as the client's own statement (pgjdbc's autocommit off would begin a plain block). */
    private static void begin(Statement st) throws SQLException {
        st.execute("BEGIN ISOLATION LEVEL READ COMMITTED");
    }

    private static void commit(Statement st) throws SQLException {
        st.execute("COMMIT");
    }

    private static void rollback(Statement st) throws SQLException {
        st.execute("ROLLBACK");
    }

    private static CompletableFuture<Integer> update(Statement st, String sql) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return st.executeUpdate(sql);
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    private static int balance(Statement st, int id) throws SQLException {
        try (ResultSet rs = st.executeQuery("SELECT bal FROM acc WHERE id = " + id)) {
            assertThat(rs.next()).isTrue();
            return rs.getInt(1);
        }
    }

    private static void assertBalanceEverywhere(int id, int expected) throws Exception {
        cluster.awaitQuiescent();
        for (int i = 0; i < 2; i++)
            try (Connection c = cluster.connect(i); Statement st = c.createStatement()) {
                assertThat(balance(st, id)).as("site " + i + " row " + id).isEqualTo(expected);
            }
        assertThat(cluster.check().values()).containsOnly("same");
    }
}
