package org.wanrep.frontend;

import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client session's updates take effect at every site in the order the session sent them, even when
 * they touch different rows: at site b the session's first update waits for a row lock taken directly in
 * b's PostgreSQL, and its second (another table, acknowledged at a meanwhile) must not commit at b before
 * the first, or a reader at b would see the later update without the earlier one (the history checker's
 * G-single-process). Another session's update is not held back by it.
 */
class SessionOrderTest {
    @Test
    void aSessionsLaterUpdateDoesNotCommitAtAnotherSiteBeforeItsEarlierOne() throws Exception {
        try (TestCluster c = new TestCluster(List.of("a", "b"), "lan", Map.of("delivery", "safe"))) {
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
                long end = System.nanoTime() + 20_000_000_000L;
                while (valueAtB(c, "z") != 1 && System.nanoTime() < end) Thread.sleep(20);
                assertThat(valueAtB(c, "z")).as("another session's update is not held back").isEqualTo(1);
                Thread.sleep(500);
                assertThat(valueAtB(c, "y")).as("the session's second update waits at b for its first").isEqualTo(0);
                blocker.commit();
            }
            c.awaitQuiescent();
            assertThat(valueAtB(c, "x")).isEqualTo(1);
            assertThat(valueAtB(c, "y")).isEqualTo(1);
        }
    }

    private static int valueAtB(TestCluster c, String table) throws SQLException {
        try (Connection b = c.pgs.get(1).connect(); Statement st = b.createStatement();
             ResultSet r = st.executeQuery("SELECT v FROM " + table + " WHERE id = 1")) {
            r.next();
            return r.getInt(1);
        }
    }
}
