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

/** Client authentication at the proxy: trust, md5 and SCRAM-SHA-256 users from the configuration. */
class AuthenticationTest {
    static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = new TestCluster(List.of("solo"), "none",
                Map.of("users", "postgres:trust,alice:scram-sha-256:s3cret wörd,bob:md5:hunter2"));
        // the proxy's users log in to the replica as their own roles (proxy.session_role client)
        try (java.sql.Connection c = cluster.connect(0); java.sql.Statement st = c.createStatement()) {
            st.execute("CREATE ROLE alice LOGIN");
            st.execute("CREATE ROLE bob LOGIN");
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) cluster.close();
    }

    private static Connection as(String user, String password) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", user);
        if (password != null) p.setProperty("password", password);
        return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + cluster.proxyPort(0) + "/postgres", p);
    }

    @Test
    void scramAndMd5UsersGetInWithTheRightPasswordOnly() throws Exception {
        for (String[] up : new String[][] {{"alice", "s3cret wörd"}, {"bob", "hunter2"}, {"postgres", null}}) {
            try (Connection c = as(up[0], up[1]); Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT 42")) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(42);
            }
        }
        assertThatThrownBy(() -> as("alice", "wrong").close()).isInstanceOf(SQLException.class)
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("28P01"));
        assertThatThrownBy(() -> as("bob", "wrong").close()).isInstanceOf(SQLException.class)
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("28P01"));
        assertThatThrownBy(() -> as("mallory", "x").close()).isInstanceOf(SQLException.class)
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("28P01"));   // as a wrong password: names cannot be probed
    }

    @Test
    void psqlWithAScramPassword() throws Exception {
        ClientTools.Result r = ClientTools.run(List.of(ClientTools.bin("psql").toString(), "-X", "-h", "127.0.0.1", "-p",
                Integer.toString(cluster.proxyPort(0)), "-U", "alice", "-d", "postgres", "-Atc", "SELECT 'in as ' || 'alice'"), null, 60);
        assertThat(r.output()).contains("password");   // no password given: psql is asked for one and fails
        ProcessBuilder pb = new ProcessBuilder(ClientTools.bin("psql").toString(), "-X", "-h", "127.0.0.1", "-p",
                Integer.toString(cluster.proxyPort(0)), "-U", "alice", "-d", "postgres", "-Atc", "SELECT 'in as ' || 'alice'").redirectErrorStream(true);
        pb.environment().put("PGPASSWORD", "s3cret wörd");
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(out).isZero();
        assertThat(out).contains("in as alice");
    }
}
