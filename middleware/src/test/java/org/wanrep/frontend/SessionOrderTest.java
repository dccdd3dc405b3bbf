package org.wanrep.frontend;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Order and sequences across two sites that share one cluster.
 *
 * <p>A client session's updates take effect at every site in the order the session sent them, even when
 * they touch different rows: at site b the session's first update waits for a row lock taken directly in
 * b's PostgreSQL, and its second (another table, acknowledged at a meanwhile) must not commit at b before
 * the first, or a reader at b would see the later update without the earlier one (the history checker's
 * G-single-process). Nor does another session's update ordered after it: commits follow the total order at
 * every site ({@link CommitOrderTest}), though the later updates run meanwhile.
 *
 * <p>Sequences are not transactional: an interactive block on the exclusive path that advanced one at its
 * origin and then rolled back (the client's ROLLBACK, or the client gone) left the origin's sequence ahead
 * of the others', and the next replicated insert took another id there than everywhere else.
 */
class SessionOrderTest {
    private static TestCluster c;

    @BeforeAll
    static void start() throws Exception {
        c = new TestCluster(List.of("a", "b"), "lan", Map.of("delivery", "safe"));
    }

    @AfterAll
    static void stop() throws Exception {
        if (c != null) c.close();
    }

    @Test
    void aSessionsLaterUpdateDoesNotCommitAtAnotherSiteBeforeItsEarlierOne() throws Exception {
        try (Connection a = c.connect(0); Statement st = a.createStatement()) {
            st.execute("CREATE TABLE x (id int PRIMARY KEY, v int NOT NULL)");
            st.execute("CREATE TABLE y (id int PRIMARY KEY, v int NOT NULL)");
            st.execute("CREATE TABLE z (id int PRIMARY KEY, v int NOT NULL)");
            st.execute("INSERT INTO x VALUES (1, 0)");
            st.execute("INSERT INTO y VALUES (1, 0)");
            st.execute("INSERT INTO z VALUES (1, 0)");
        }
        c.awaitQuiescent();
        try (Connection blocker = c.pgs.get(1).connect(); Statement b = blocker.createStatement();
             Connection session = c.connect(0); Statement s = session.createStatement();
             Connection other = c.connect(0); Statement o = other.createStatement()) {
            blocker.setAutoCommit(false);
            b.execute("SELECT v FROM x WHERE id = 1 FOR UPDATE");   // b's run of the first update waits behind this
            s.executeUpdate("UPDATE x SET v = 1 WHERE id = 1");     // acknowledged at a
            s.executeUpdate("UPDATE y SET v = 1 WHERE id = 1");     // ordered after it, no row in common
            o.executeUpdate("UPDATE z SET v = 1 WHERE id = 1");     // another session's
            Thread.sleep(500);
            assertThat(valueAtB(c, "y")).as("the session's second update waits at b for its first").isEqualTo(0);
            assertThat(valueAtB(c, "z")).as("another session's later update commits after it too").isEqualTo(0);
            blocker.commit();
        }
        c.awaitQuiescent();
        assertThat(valueAtB(c, "x")).isEqualTo(1);
        assertThat(valueAtB(c, "y")).isEqualTo(1);
    }

    @Test
    void aRolledBackBlockLeavesNoSequenceAheadAtItsOrigin() throws Exception {
        try (Connection a = c.connect(0); Statement st = a.createStatement()) {
            st.execute("CREATE TABLE sq (id serial PRIMARY KEY, v int NOT NULL)");
            st.execute("CREATE SEQUENCE other_seq");
        }
        c.awaitQuiescent();
        try (Connection a = c.connect(0); Statement st = a.createStatement()) {
            a.setAutoCommit(false);
            st.executeUpdate("INSERT INTO sq (v) VALUES (1)");   // takes the exclusive lock, advances sq_id_seq at a
            st.execute("SELECT nextval('other_seq')");
            a.rollback();
            st.executeUpdate("INSERT INTO sq (v) VALUES (2)");
            st.execute("SELECT nextval('other_seq')");
            a.commit();
            a.setAutoCommit(true);
            st.executeUpdate("INSERT INTO sq (v) VALUES (3)");
        }
        // a client that leaves with its block open
        Connection gone = c.connect(0);
        gone.setAutoCommit(false);
        try (Statement st = gone.createStatement()) {
            st.executeUpdate("INSERT INTO sq (v) VALUES (4)");
        }
        gone.close();
        try (Connection b = c.connect(1); Statement st = b.createStatement()) {
            st.executeUpdate("INSERT INTO sq (v) VALUES (5)");
        }
        try (Connection a = c.connect(0); Statement st = a.createStatement()) {
            st.executeUpdate("INSERT INTO sq (v) VALUES (6)");
        }
        c.awaitQuiescent();
        Map<String, String> verdict = c.check();
        assertThat(verdict).allSatisfy((t, v) -> assertThat(v).as(t).isEqualTo("same"));
        for (int i = 0; i < 2; i++) {
            assertThat(ids(c, i)).as("site %d", i).containsExactly(1, 2, 3, 4);
            try (Connection x = c.pgs.get(i).connect(); Statement st = x.createStatement();
                 ResultSet r = st.executeQuery("SELECT last_value FROM other_seq")) {
                r.next();
                assertThat(r.getLong(1)).as("other_seq at site %d", i).isEqualTo(1);
            }
        }
    }

    private static int valueAtB(TestCluster c, String table) throws SQLException {
        try (Connection b = c.pgs.get(1).connect(); Statement st = b.createStatement();
             ResultSet r = st.executeQuery("SELECT v FROM " + table + " WHERE id = 1")) {
            r.next();
            return r.getInt(1);
        }
    }

    private static List<Integer> ids(TestCluster c, int site) throws Exception {
        List<Integer> ids = new ArrayList<>();
        try (Connection x = c.pgs.get(site).connect(); Statement st = x.createStatement();
             ResultSet r = st.executeQuery("SELECT id FROM sq ORDER BY id")) {
            while (r.next()) ids.add(r.getInt(1));
        }
        return ids;
    }
}
