package org.wanrep.frontend;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
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
 * Interactive blocks (pgjdbc, autocommit off) at two sites commit by certification, without a cluster
 * lock: disjoint blocks that overlap in time both commit, and of two blocks in write skew (each reads
 * the row the other writes, their writes disjoint, which snapshot isolation would commit) exactly one
 * commits: 1-copy-serializable. Replicas end identical.
 */
class CertifiedBlocksTest {
    private static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = new TestCluster(List.of("a", "b"), "lan", Map.of("delivery", "safe", "blocks", "certify"));
        try (Connection c = cluster.connect(0); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE doctors (id int PRIMARY KEY, on_call boolean NOT NULL)");
            st.execute("CREATE TABLE acc (id int PRIMARY KEY, bal int NOT NULL)");
            st.execute("INSERT INTO doctors VALUES (1, true), (2, true)");
            st.execute("INSERT INTO acc VALUES (1, 100), (2, 100)");
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) cluster.close();
    }

    private static long aborts(int site) throws SQLException {
        try (Connection c = cluster.connect(site); Statement st = c.createStatement(); ResultSet r = st.executeQuery("SHOW wanrep.certification")) {
            r.next();
            return r.getLong("certification_aborts");
        }
    }

    @Test
    void overlappingBlocksOnDisjointRowsBothCommit() throws Exception {
        long before0 = aborts(0), before1 = aborts(1);
        try (Connection x = cluster.connect(0); Connection y = cluster.connect(1)) {
            x.setAutoCommit(false);
            y.setAutoCommit(false);
            try (Statement sx = x.createStatement(); Statement sy = y.createStatement()) {
                sx.executeQuery("SELECT bal FROM acc WHERE id = 1").close();
                sy.executeQuery("SELECT bal FROM acc WHERE id = 2").close();
                sx.executeUpdate("UPDATE acc SET bal = bal + 1 WHERE id = 1");
                x.commit();
                // the exclusive path would abort this block (an update committed at its site since it began)
                sy.executeUpdate("UPDATE acc SET bal = bal + 1 WHERE id = 2");
                y.commit();
            }
        }
        assertThat(cluster.check().values()).containsOnly("same");
        try (Connection c = cluster.connect(1); Statement st = c.createStatement(); ResultSet r = st.executeQuery("SELECT sum(bal) FROM acc")) {
            r.next();
            assertThat(r.getLong(1)).isEqualTo(202);
        }
        assertThat(aborts(0)).isEqualTo(before0);
        assertThat(aborts(1)).isEqualTo(before1);
    }

    /** pgjdbc names its COMMIT statement after a few uses: an aborted COMMIT must still leave it defined. */
    @Test
    void aConnectionGoesOnAfterRepeatedCertificationAborts() throws Exception {
        try (Connection x = cluster.connect(0); Connection y = cluster.connect(1)) {
            x.setAutoCommit(false);
            y.setAutoCommit(false);
            try (Statement sx = x.createStatement(); Statement sy = y.createStatement()) {
                for (int i = 0; i < 8; i++) {
                    sx.executeQuery("SELECT bal FROM acc WHERE id = 1").close();
                    sy.executeQuery("SELECT bal FROM acc WHERE id = 1").close();
                    sx.executeUpdate("UPDATE acc SET bal = bal + 1 WHERE id = 1");
                    sy.executeUpdate("UPDATE acc SET bal = bal + 1 WHERE id = 2");
                    x.commit();
                    assertThatThrownBy(y::commit).as("attempt " + i).isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("40001"));
                    y.rollback();
                }
                sy.executeUpdate("UPDATE acc SET bal = bal - 8 WHERE id = 1");
                y.commit();
            }
        }
        assertThat(cluster.check().values()).containsOnly("same");
    }

    @Test
    void writeSkewCommitsExactlyOneOfTheTwoBlocks() throws Exception {
        long before0 = aborts(0), before1 = aborts(1);
        try (Connection x = cluster.connect(0); Connection y = cluster.connect(1)) {
            x.setAutoCommit(false);
            y.setAutoCommit(false);
            try (Statement sx = x.createStatement(); Statement sy = y.createStatement()) {
                // both see two doctors on call, each takes a different one off call
                for (Statement s : List.of(sx, sy))
                    try (ResultSet r = s.executeQuery("SELECT count(*) FROM doctors WHERE id IN (1, 2) AND on_call")) {
                        r.next();
                        assertThat(r.getInt(1)).isEqualTo(2);
                    }
                sx.executeUpdate("UPDATE doctors SET on_call = false WHERE id = 1");
                sy.executeUpdate("UPDATE doctors SET on_call = false WHERE id = 2");
                x.commit();
                assertThatThrownBy(y::commit).isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("40001"));
                y.rollback();
            }
        }
        assertThat(cluster.check().values()).containsOnly("same");
        for (int i = 0; i < 2; i++)
            try (Connection c = cluster.pgs.get(i).connect(); Statement st = c.createStatement();
                 ResultSet r = st.executeQuery("SELECT count(*) FROM doctors WHERE on_call")) {
                r.next();
                assertThat(r.getInt(1)).as("doctors on call at replica " + i).isEqualTo(1);
            }
        // every site decided alike: one abort, counted at both
        assertThat(aborts(0) - before0).isEqualTo(1);
        assertThat(aborts(1) - before1).isEqualTo(1);
        // nothing left prepared
        for (int i = 0; i < 2; i++)
            try (Connection c = cluster.pgs.get(i).connect(); Statement st = c.createStatement();
                 ResultSet r = st.executeQuery("SELECT count(*) FROM pg_prepared_xacts")) {
                r.next();
                assertThat(r.getInt(1)).isZero();
            }
    }
}
