package org.wanrep.frontend;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Read-only transactions at different sites see one order of the updates. Two updates X and Y of different tables,
 * from different sessions, are ordered X before Y. At b, X's execution waits behind a row lock taken directly in b's
 * PostgreSQL; at c, Y's does. If a site committed Y before X, a reader at b would see Y without X while a reader at c
 * sees X without Y: no serial order has both readers (a long fork), so the replicas would not be one copy.
 *
 * <p>Commits therefore follow the total order at every site, and a transaction that ran waits for its turn holding its
 * replica connection: the one whose turn it is must always find one.
 */
class CommitOrderTest {
    private static TestCluster c;

    @BeforeAll
    static void start() throws Exception {
        // two replica connections: transactions that ran wait for their turn to commit holding one each
        c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of("delivery", "safe", "pool.size", "2"));
    }

    @AfterAll
    static void stop() throws Exception {
        if (c != null) c.close();
    }

    @Test
    void readersAtDifferentSitesNeverSeeTwoUpdatesInOppositeOrders() throws Exception {
        try (Connection a = c.connect(0); Statement st = a.createStatement()) {
            st.execute("CREATE TABLE x (id int PRIMARY KEY, v int NOT NULL)");
            st.execute("CREATE TABLE y (id int PRIMARY KEY, v int NOT NULL)");
            st.execute("INSERT INTO x VALUES (1, 0)");
            st.execute("INSERT INTO y VALUES (1, 0)");
        }
        c.awaitQuiescent();
        try (Connection blockB = c.pgs.get(1).connect(); Statement bb = blockB.createStatement();
             Connection blockC = c.pgs.get(2).connect(); Statement bc = blockC.createStatement();
             Connection s1 = c.connect(0); Statement x = s1.createStatement();
             Connection s2 = c.connect(0); Statement y = s2.createStatement()) {
            blockB.setAutoCommit(false);
            blockC.setAutoCommit(false);
            bb.execute("SELECT v FROM x WHERE id = 1 FOR UPDATE");   // b's run of X waits behind this
            bc.execute("SELECT v FROM y WHERE id = 1 FOR UPDATE");   // c's run of Y waits behind this
            x.executeUpdate("UPDATE x SET v = 1 WHERE id = 1");       // X, acknowledged at a
            y.executeUpdate("UPDATE y SET v = 1 WHERE id = 1");       // Y, ordered after X, acknowledged at a
            Thread.sleep(1000);   // whatever b and c may commit meanwhile
            String atB = snapshot(1), atC = snapshot(2);
            blockB.commit();
            blockC.commit();
            // a prefix of X, Y at every site: "0 0", "1 0" or "1 1", never "0 1"
            assertThat(List.of(atB, atC)).as("x y read at b and at c").allSatisfy(s -> assertThat(s).isIn("0 0", "1 0", "1 1"));
        }
        c.awaitQuiescent();
        assertThat(c.check().values()).containsOnly("same");
        assertThat(snapshot(1)).isEqualTo("1 1");
        assertThat(snapshot(2)).isEqualTo("1 1");
    }

    /**
     * At b, W waits behind a row lock taken directly in b's PostgreSQL; X, ordered next, waits for W's middleware lock;
     * updates of other rows ordered after X may run meanwhile but commit after X. With two replica connections, had the
     * later ones taken both while X waited for its lock, X (whose turn comes when W commits) would find none, and
     * nothing at b could commit again.
     */
    @Test
    void theTransactionWhoseTurnItIsAlwaysFindsAConnection() throws Exception {
        try (Connection a = c.connect(0); Statement st = a.createStatement()) {
            st.execute("CREATE TABLE w (id int PRIMARY KEY, v int NOT NULL)");
            st.execute("INSERT INTO w VALUES (1, 0)");
            st.execute("CREATE TABLE others (id int PRIMARY KEY, v int NOT NULL)");
            st.execute("INSERT INTO others SELECT g, 0 FROM generate_series(1, 6) g");
        }
        c.awaitQuiescent();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newCachedThreadPool();
        try (Connection blockB = c.pgs.get(1).connect(); Statement bb = blockB.createStatement()) {
            blockB.setAutoCommit(false);
            bb.execute("SELECT v FROM w WHERE id = 1 FOR UPDATE");   // b's run of W waits behind this
            List<java.util.concurrent.Future<Integer>> sent = new java.util.ArrayList<>();
            sent.add(pool.submit(() -> update(0, "UPDATE w SET v = v + 1 WHERE id = 1")));   // W
            Thread.sleep(300);
            sent.add(pool.submit(() -> update(0, "UPDATE w SET v = v + 10 WHERE id = 1")));  // X: W's row
            Thread.sleep(300);
            for (int i = 1; i <= 6; i++) {
                int id = i;
                sent.add(pool.submit(() -> update(0, "UPDATE others SET v = 1 WHERE id = " + id)));
            }
            for (var f : sent) assertThat(f.get(30, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo(1);   // acknowledged at a
            Thread.sleep(500);
            blockB.commit();
        } finally {
            pool.shutdownNow();
        }
        long released = System.nanoTime();
        c.awaitQuiescent();
        assertThat((System.nanoTime() - released) / 1_000_000).as("ms until b finished after the lock went").isLessThan(10_000);
        assertThat(c.check().values()).containsOnly("same");
        try (Connection r = c.pgs.get(1).connect(); Statement st = r.createStatement();
             ResultSet rs = st.executeQuery("SELECT (SELECT v FROM w) || ' ' || (SELECT sum(v) FROM others)")) {
            rs.next();
            assertThat(rs.getString(1)).isEqualTo("11 6");
        }
    }

    private static int update(int site, String sql) throws Exception {
        try (Connection x = c.connect(site); Statement st = x.createStatement()) {
            return st.executeUpdate(sql);
        }
    }

    /** x's and y's values in one snapshot of site i's replica, read directly. */
    private static String snapshot(int i) throws Exception {
        try (Connection r = c.pgs.get(i).connect(); Statement st = r.createStatement();
             ResultSet rs = st.executeQuery("SELECT (SELECT v FROM x WHERE id = 1) || ' ' || (SELECT v FROM y WHERE id = 1)")) {
            rs.next();
            return rs.getString(1);
        }
    }
}
