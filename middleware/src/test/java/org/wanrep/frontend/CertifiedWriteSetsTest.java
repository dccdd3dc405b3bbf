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

/**
 * Under symmetric execution with {@code blocks.write_sets: on} a certified block's write set is captured at its origin's PREPARE TRANSACTION (a
 * two-phase test_decoding slot) and travels in its CERTIFY; the other sites apply it instead of replaying the
 * block's statements. What a write set cannot carry (an unlogged table, code the classifier does not read) still
 * travels as the statement log. Each case ends with identical replicas, and {@code SHOW wanrep.certification} at the
 * other site says which way the block came.
 */
class CertifiedWriteSetsTest {
    private static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = new TestCluster(List.of("a", "b"), "lan", Map.of("delivery", "safe", "blocks", "certify", "blocks.write_sets", "on"));
        try (Connection c = cluster.connect(0); Statement st = c.createStatement()) {
            // char(n), varchar(n) and numeric(p,s) need their typmod to be applied faithfully (a character without
            // one is char(1)); a long incompressible text stays TOASTed and unchanged in an update of another column
            st.execute("CREATE TABLE kinds (id int PRIMARY KEY, c char(12), v varchar(20), n numeric(10,3), t text, big text, "
                    + "a int[], j jsonb, b bytea, f float8, ok boolean)");
            st.execute("CREATE TABLE nokey (x int, y text)");
            st.execute("CREATE UNLOGGED TABLE scratch (id int PRIMARY KEY, v int)");
            st.execute("CREATE TABLE acc (id int PRIMARY KEY, bal int NOT NULL)");
            st.execute("INSERT INTO acc SELECT g, 100 FROM generate_series(1, 10) g");
            st.execute("INSERT INTO nokey VALUES (1, 'one'), (2, 'two')");
            st.execute("CREATE FUNCTION bump(k int) RETURNS void LANGUAGE plpgsql AS $$ BEGIN UPDATE acc SET bal = bal + 1 WHERE id = k; END $$");
        }
        // the capture starts in the background when the site starts: blocks replay their log until it runs
        long deadline = System.nanoTime() + 60_000_000_000L;
        int k = 0;
        while (applied(1) == 0) {
            assertThat(System.nanoTime()).as("a certified block applied from its write set within 60 s").isLessThan(deadline);
            try (Connection x = cluster.connect(0)) {
                x.setAutoCommit(false);
                try (Statement s = x.createStatement()) {
                    s.executeUpdate("UPDATE acc SET bal = bal + 1 WHERE id = " + (1 + k++ % 10));
                }
                x.commit();
            }
            Thread.sleep(200);
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) cluster.close();
    }

    private static long[] certification(int site) throws SQLException {
        try (Connection c = cluster.connect(site); Statement st = c.createStatement(); ResultSet r = st.executeQuery("SHOW wanrep.certification")) {
            r.next();
            return new long[]{r.getLong("write_sets_applied"), r.getLong("logs_replayed"), r.getLong("certified_commits")};
        }
    }

    private static long applied(int site) throws SQLException { return certification(site)[0]; }

    /** Runs {@code statements} as one block at site a (autocommit off, each its own round trip) and commits it. */
    private static void block(String... statements) throws SQLException {
        try (Connection x = cluster.connect(0)) {
            x.setAutoCommit(false);
            try (Statement s = x.createStatement()) {
                for (String sql : statements) s.execute(sql);
            }
            x.commit();
        }
    }

    @Test
    void aBlockTravelsAsTheWriteSetItsOriginPrepared() throws Exception {
        long[] before = certification(1);
        String big = "x".repeat(1) + java.util.stream.IntStream.range(0, 4000).mapToObj(i -> Integer.toHexString(i * 7919)).reduce("", String::concat);
        block("SELECT bal FROM acc WHERE id = 1",
                "INSERT INTO kinds VALUES (1, 'ab', 'it''s', 1.5, 'line\nbreak \\ back', '" + big + "', '{1,NULL,3}', '{\"k\": [1, 2]}', '\\x00ff', 'NaN', true),"
                        + " (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), (3, 'c', '', -0.001, 'e''\"', 'small', '{}', 'null', '\\x', '-Infinity', false)",
                "UPDATE acc SET bal = bal - 5 WHERE id = 1");
        block("UPDATE kinds SET v = 'changed' WHERE id = 1",      // big stays unchanged (TOASTed): never written as NULL
                "UPDATE kinds SET id = 20 WHERE id = 2",           // the key changes: the old key finds the row
                "DELETE FROM kinds WHERE id = 3",
                "INSERT INTO nokey VALUES (3, 'three')");          // an insert needs no key
        long[] after = certification(1);
        assertThat(after[0] - before[0]).as("blocks applied from their write set at site b").isEqualTo(2);
        assertThat(after[1]).as("blocks replayed at site b").isEqualTo(before[1]);
        assertThat(cluster.check().values()).containsOnly("same");
        try (Connection c = cluster.pgs.get(1).connect(); Statement st = c.createStatement();
             ResultSet r = st.executeQuery("SELECT c, length(big), v FROM kinds WHERE id = 1")) {
            assertThat(r.next()).isTrue();
            assertThat(r.getString(1)).isEqualTo("ab          ");
            assertThat(r.getInt(2)).isEqualTo(big.length());
            assertThat(r.getString(3)).isEqualTo("changed");
        }
    }

    @Test
    void whatAWriteSetCannotCarryReplaysTheLog() throws Exception {
        long[] before = certification(1);
        block("INSERT INTO scratch VALUES (1, 1)", "UPDATE acc SET bal = bal + 1 WHERE id = 2");   // unlogged: never decoded
        block("SELECT bump(3)");                                                                  // code the classifier does not read
        block("UPDATE nokey SET y = 'uno' WHERE x = 1");                                          // no key: the capture refuses it
        long[] after = certification(1);
        assertThat(after[1] - before[1]).as("blocks replayed at site b").isEqualTo(3);
        assertThat(after[0]).as("blocks applied from a write set at site b").isEqualTo(before[0]);
        assertThat(cluster.check().values()).containsOnly("same");
        for (int i = 0; i < 2; i++)
            try (Connection c = cluster.pgs.get(i).connect(); Statement st = c.createStatement();
                 ResultSet r = st.executeQuery("SELECT (SELECT count(*) FROM scratch), (SELECT y FROM nokey WHERE x = 1)")) {
                r.next();
                assertThat(r.getInt(1)).as("unlogged rows at replica " + i).isEqualTo(1);
                assertThat(r.getString(2)).isEqualTo("uno");
            }
    }

    @Test
    void blocksFromBothSitesAtOnceKeepTheSumAndIdenticalReplicas() throws Exception {
        long sum0 = sum();
        Thread[] ts = new Thread[4];
        long[] committed = new long[ts.length];
        for (int i = 0; i < ts.length; i++) {
            int k = i;
            ts[i] = Thread.ofPlatform().start(() -> {
                java.util.Random rnd = new java.util.Random(k);
                for (int n = 0; n < 40; n++) {
                    int from = 1 + rnd.nextInt(10), to = 1 + rnd.nextInt(10);
                    try (Connection x = cluster.connect(k % 2)) {
                        x.setAutoCommit(false);
                        try (Statement s = x.createStatement()) {
                            s.executeQuery("SELECT bal FROM acc WHERE id = " + from).close();
                            s.executeUpdate("UPDATE acc SET bal = bal - 1 WHERE id = " + from);
                            s.executeUpdate("UPDATE acc SET bal = bal + 1 WHERE id = " + to);
                        }
                        x.commit();
                        committed[k]++;
                    } catch (SQLException e) {
                        if (!"40001".equals(e.getSQLState()) && !"55P03".equals(e.getSQLState())) throw new RuntimeException(e);
                    }
                }
            });
        }
        for (Thread t : ts) t.join();
        assertThat(java.util.Arrays.stream(committed).sum()).isPositive();
        assertThat(cluster.check().values()).containsOnly("same");
        assertThat(sum()).isEqualTo(sum0);
        assertThat(applied(0)).as("site a applied site b's blocks from their write sets").isPositive();
    }

    private static long sum() throws SQLException {
        try (Connection c = cluster.pgs.get(1).connect(); Statement st = c.createStatement(); ResultSet r = st.executeQuery("SELECT sum(bal) FROM acc")) {
            r.next();
            return r.getLong(1);
        }
    }
}
