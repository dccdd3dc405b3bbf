package org.wanrep.frontend;

import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Sequences are not transactional: an interactive block on the exclusive path that advanced one at its
 * origin and then rolled back (the client's ROLLBACK, or the client gone) left the origin's sequence ahead
 * of the others', and the next replicated insert took another id there than everywhere else.
 */
class BlockSequenceTest {
    @Test
    void aRolledBackBlockLeavesNoSequenceAheadAtItsOrigin() throws Exception {
        try (TestCluster c = new TestCluster(List.of("a", "b"), "lan", Map.of("delivery", "safe"))) {
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
