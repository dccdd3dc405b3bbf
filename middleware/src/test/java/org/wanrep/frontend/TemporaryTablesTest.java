package org.wanrep.frontend;

import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Temporary tables exist in one session at one site. Before: an update reading one replicated to the other sites
 * as a statement they could not run, so they kept nothing while the origin kept the rows (silent divergence), and a
 * block that read one stopped every other site when its log failed there. Now what only writes temporary tables
 * runs at its site, and what would need one elsewhere is refused with 0A000, nothing applied anywhere.
 */
class TemporaryTablesTest {
    @Test
    void temporaryTablesStayInTheirSessionAndNeverReachTheOtherSites() throws Exception {
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of())) {
            try (Connection conn = c.connect(0); Statement st = conn.createStatement()) {
                st.execute("CREATE TABLE real_t(id int PRIMARY KEY, v text)");
                st.execute("INSERT INTO real_t VALUES (1, 'one')");
                st.execute("CREATE TEMP TABLE tmp(id int, v text)");
                assertThat(st.executeUpdate("INSERT INTO tmp VALUES (2, 'two'), (3, 'three')")).isEqualTo(2);   // here only
                assertThat(st.executeUpdate("UPDATE tmp SET v = upper(v)")).isEqualTo(2);
                assertThatThrownBy(() -> st.executeUpdate("INSERT INTO real_t SELECT * FROM tmp"))
                        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("0A000"));
                // a block that read it and wrote a permanent table: rolled back at COMMIT, not shipped
                conn.setAutoCommit(false);
                try (ResultSet rs = st.executeQuery("SELECT count(*) FROM tmp")) {
                    rs.next();
                    assertThat(rs.getInt(1)).isEqualTo(2);
                }
                st.executeUpdate("UPDATE real_t SET v = 'from a block that read tmp' WHERE id = 1");
                assertThatThrownBy(conn::commit)
                        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("0A000"));
                conn.setAutoCommit(true);
                // a block that only reads it commits as any read-only block
                conn.setAutoCommit(false);
                try (ResultSet rs = st.executeQuery("SELECT count(*) FROM tmp")) { rs.next(); }
                conn.commit();
                conn.setAutoCommit(true);
                // the session goes on: permanent tables replicate as before
                assertThat(st.executeUpdate("INSERT INTO real_t VALUES (4, 'four')")).isEqualTo(1);
            }
            c.awaitQuiescent();
            assertThat(c.check()).allSatisfy((t, v) -> assertThat(v).as(t).isEqualTo("same"));
            for (int i = 0; i < 3; i++)
                try (Connection conn = c.pgs.get(i).connect(); Statement st = conn.createStatement();
                     ResultSet rs = st.executeQuery("SELECT string_agg(id || v, ',' ORDER BY id) FROM real_t")) {
                    rs.next();
                    assertThat(rs.getString(1)).as("site %d", i).isEqualTo("1one,4four");
                }
            try (Connection conn = c.connect(1); Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SHOW wanrep.sites")) {
                rs.next();
                assertThat(rs.getString(2)).isEqualTo("serving");
            }
        }
    }
}
