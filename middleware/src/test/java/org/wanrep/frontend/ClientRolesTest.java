package org.wanrep.frontend;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * proxy.session_role client: a proxy user runs as its own PostgreSQL role, here and, for its updates,
 * at every other site, so a privilege refuses an update everywhere alike (a site running it as
 * superuser would commit what the origin refused, and the replicas would differ).
 */
class ClientRolesTest {
    static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = new TestCluster(List.of("a", "b"), "none", Map.of("proxy.session_role", "client", "users", "postgres:trust,alice:md5:alice-pw"));
        try (Connection c = cluster.connect(0); Statement st = c.createStatement()) {
            st.execute("CREATE ROLE alice LOGIN PASSWORD 'alice-pw'");
            st.execute("CREATE TABLE t (id int PRIMARY KEY, v int)");
            st.execute("CREATE TABLE secret (id int PRIMARY KEY, v int)");
            st.execute("INSERT INTO t VALUES (1, 0)");
            st.execute("INSERT INTO secret VALUES (1, 0)");
            st.execute("GRANT SELECT, UPDATE ON t TO alice");
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) cluster.close();
    }

    static Connection alice(int site) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", "alice");
        p.setProperty("password", "alice-pw");
        return DriverManager.getConnection(cluster.url(site, ""), p);
    }

    @Test
    void privilegesRefuseAnUpdateAtEverySiteAlike() throws Exception {
        try (Connection c = alice(1); Statement st = c.createStatement()) {
            try (ResultSet rs = st.executeQuery("SELECT current_user, session_user")) {
                rs.next();
                assertThat(rs.getString(1) + "/" + rs.getString(2)).isEqualTo("alice/alice");
            }
            assertThat(st.executeUpdate("UPDATE t SET v = v + 1 WHERE id = 1")).isEqualTo(1);
            // refused by PostgreSQL at the origin and, run as alice too, at the other site
            assertThatThrownBy(() -> st.executeUpdate("UPDATE secret SET v = 99"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("42501"));
            assertThatThrownBy(() -> st.executeUpdate("UPDATE t SET v = (SELECT max(v) FROM secret) + 7"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("42501"));
            // the client cannot become the superuser: the session logged in as alice, PostgreSQL refuses
            assertThatThrownBy(() -> st.execute("SET ROLE postgres"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("42501"));
            assertThatThrownBy(() -> st.execute("SET SESSION AUTHORIZATION postgres"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("42501"));
            // wanrep's own commands for the replica user only: refused with an error through pgjdbc's extended
            // protocol too (it ended the session before), and the session goes on
            assertThatThrownBy(() -> st.executeQuery("SHOW wanrep.log FROM 1 TO 2 LIMIT 1"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("42501"));
            try (ResultSet rs = st.executeQuery("SELECT 1")) {
                assertThat(rs.next()).isTrue();
            }
            // an interactive block's statement log runs as alice at the other site too
            c.setAutoCommit(false);
            st.executeUpdate("UPDATE t SET v = v + 10 WHERE id = 1");
            c.commit();
        }
        assertThat(cluster.check()).allSatisfy((table, verdict) -> assertThat(verdict).as(table).isEqualTo("same"));
        for (int i = 0; i < 2; i++) {
            try (Connection c = cluster.pgs.get(i).connect(); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT (SELECT v FROM t), (SELECT v FROM secret)")) {
                rs.next();
                assertThat(rs.getInt(1) + "," + rs.getInt(2)).as("replica " + i).isEqualTo("11,0");
            }
            assertThat(cluster.site(i).engine().failure()).isNull();
        }
    }
}
