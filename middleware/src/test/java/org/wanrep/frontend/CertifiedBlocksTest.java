package org.wanrep.frontend;

import org.junit.jupiter.api.AfterAll;
import org.wanrep.txn.InteractiveBlock;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

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
            st.execute("CREATE TABLE cyc (id int PRIMARY KEY, v int NOT NULL)");
            st.execute("INSERT INTO cyc VALUES (1, 0), (2, 0), (3, 0)");
            st.execute("CREATE TABLE draws (id int PRIMARY KEY, v float8 NOT NULL)");
            st.execute("INSERT INTO draws VALUES (1, 0), (2, 0)");
        }
    }

    /**
     * A block's reads are left out of the log the others replay, but a read that draws from random() (or seeds it)
     * moves the sequence its later draws come from: left out, the replay's update drew another value than the origin's
     * (simple-query blocks, whose logs are joined, diverged so).
     */
    @Test
    void readsThatDrawRandomValuesAreReplayedSoLaterDrawsAgree() throws Exception {
        for (String mode : List.of("preferQueryMode=simple", "")) {
            for (String read : List.of("SELECT random()", "SELECT pg_catalog.setseed(0.5)", "SELECT 1 FROM draws WHERE random() < 2")) {
                try (Connection c = cluster.connect(0, mode)) {
                    c.setAutoCommit(false);
                    try (Statement st = c.createStatement()) {
                        st.executeQuery(read).close();
                        st.executeUpdate("UPDATE draws SET v = random() WHERE id = 1");
                        st.executeQuery("SELECT v FROM draws WHERE id = 2").close();   // left out: it draws nothing
                        st.executeUpdate("UPDATE draws SET v = random() WHERE id = 2");
                    }
                    c.commit();
                }
                assertThat(cluster.check().get("public.draws")).as("%s, %s", mode, read).isEqualTo("same");
            }
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

    /**
     * psql sends each statement as a simple Query: the origin answers a certified block's plain COMMIT itself once the
     * prepared transaction is committed, as PostgreSQL would (the session goes on, idle, and sees its rows).
     */
    @Test
    void psqlBlocksCommitAndTheSessionGoesOn() throws Exception {
        ClientTools.Result r = ClientTools.psql(cluster.proxyPort(0), String.join("\n",
                "BEGIN;", "SELECT bal FROM acc WHERE id = 1;", "UPDATE acc SET bal = bal + 10 WHERE id = 1;", "COMMIT;",
                "SELECT 'status:' || (CASE WHEN pg_catalog.txid_current_if_assigned() IS NULL THEN 'idle' ELSE 'busy' END);",
                "begin;", "UPDATE acc SET bal = bal - 10 WHERE id = 1;", "end;",
                "SELECT 'sum:' || sum(bal) FROM acc;", ""));
        assertThat(r.output()).doesNotContain("ERROR").doesNotContain("WARNING").contains("COMMIT").contains("status:idle");
        assertThat(r.output().split("COMMIT", -1).length - 1).as("COMMIT answered for both blocks").isEqualTo(2);
        assertThat(cluster.check().values()).containsOnly("same");
    }

    /**
     * COMMIT PREPARED runs without the client's statement_timeout (the group decided; a timeout here must not undo it
     * at this site only): lifted and put back around it, unless it was 0 at BEGIN and no statement of the block could
     * set it (then the lift is left out, two queries fewer). Seen from the session through where the lift keeps the
     * timeout meanwhile, and the session's own timeout is what it set, either way.
     */
    @Test
    void theResolutionLiftsTheClientsStatementTimeoutOnlyWhenItMayBeSet() throws Exception {
        String saved = "SELECT 'saved:' || coalesce(current_setting('" + InteractiveBlock.SAVED_TIMEOUT + "', true), 'none')"
                + " || ' timeout:' || current_setting('statement_timeout');";
        // each in a session of its own: what a lift keeps stays set in the session
        List<List<String>> sessions = List.of(
                List.of("BEGIN;", "UPDATE acc SET bal = bal + 1 WHERE id = 1;", "COMMIT;"),
                List.of("SET statement_timeout = '5s';", "BEGIN;", "UPDATE acc SET bal = bal - 1 WHERE id = 1;", "COMMIT;"),
                List.of("BEGIN;", "UPDATE acc SET bal = bal + 1 WHERE id = 2;", "SET statement_timeout = '4s';", "COMMIT;"),
                List.of("BEGIN;", "UPDATE acc SET bal = bal - 1 WHERE id = 2;", "SELECT set_config('statement_timeout', '3s', false);", "COMMIT;"));
        List<String> expected = List.of("saved:none timeout:0", "saved:5s timeout:5s", "saved:4s timeout:4s", "saved:3s timeout:3s");
        for (int k = 0; k < sessions.size(); k++) {
            List<String> script = new java.util.ArrayList<>(sessions.get(k));
            script.add(saved);
            script.add("");
            ClientTools.Result r = ClientTools.psql(cluster.proxyPort(0), String.join("\n", script));
            assertThat(r.output()).as("session %d", k).doesNotContain("ERROR").doesNotContain("WARNING").contains("COMMIT").contains(expected.get(k));
        }
        assertThat(cluster.check().values()).containsOnly("same");
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
    /**
     * The cycle history-check found across the middleware and PostgreSQL at a block's origin (site a): block P holds
     * row 1 and is prepared; its COMMIT PREPARED waits, in delivery order, for update Y delivered before it, which read
     * row 1 (a read-write conflict: P certifies, but must commit after Y); Y waits in PostgreSQL on row 2, held by
     * block B, still running at a; B now writes row 1 and waits in PostgreSQL on P. PostgreSQL's deadlock detector
     * does not see the middleware's edge (nor through a prepared transaction): without a bound on B's waits, all
     * three wait for ever. B must fail (40001) instead; then Y and P commit everywhere.
     */
    @Test
    void aBlockWaitingOnAPreparedBlockCannotHangTheUpdatesOrderedBeforeIt() throws Exception {
        ExecutorService pool = Executors.newCachedThreadPool();
        try (Connection p = cluster.connect(0); Connection b = cluster.connect(0); Connection y = cluster.connect(1, "preferQueryMode=simple")) {
            p.setAutoCommit(false);
            b.setAutoCommit(false);
            Statement sp = p.createStatement(), sb = b.createStatement(), sy = y.createStatement();
            sb.executeUpdate("UPDATE cyc SET v = v + 1 WHERE id = 2");      // B holds row 2 at site a
            sp.executeUpdate("UPDATE cyc SET v = v + 10 WHERE id = 1");     // P holds row 1, its snapshot before Y
            // Y, from site b: writes row 2, reads row 1; committed at b, at a it waits in PostgreSQL on B
            sy.execute("UPDATE cyc SET v = v + 100 WHERE id = 2; SELECT v FROM cyc WHERE id = 1");
            Future<?> commitP = pool.submit(() -> { p.commit(); return null; });
            awaitPrepared(0);   // P certifies after Y; at a it waits for Y's locks
            Future<Integer> bWrites = pool.submit(() -> sb.executeUpdate("UPDATE cyc SET v = v + 1 WHERE id = 1"));
            assertThatThrownBy(() -> bWrites.get(20, TimeUnit.SECONDS)).as("B's wait on the prepared block P")
                    .isInstanceOfSatisfying(java.util.concurrent.ExecutionException.class,
                            e -> assertThat(((SQLException) e.getCause()).getSQLState()).isEqualTo("40001"));
            b.rollback();
            commitP.get(20, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        assertThat(cluster.check().values()).containsOnly("same");
        for (int i = 0; i < 2; i++)
            try (Connection c = cluster.pgs.get(i).connect(); Statement st = c.createStatement();
                 ResultSet r = st.executeQuery("SELECT string_agg(id || '=' || v, ',' ORDER BY id) FROM cyc")) {
                r.next();
                assertThat(r.getString(1)).as("replica " + i).startsWith("1=10,2=100,");
            }
    }

    /**
     * The same kind of cycle through the exclusive lock: block B (site a) wrote row 3, then changes the catalog, which
     * takes the exclusive path and waits for the all-tables lock; update Y, ordered before that lock, waits at a in
     * PostgreSQL on B's row 3. B gives up (40001) instead of waiting for ever. (COMMIT after advancing a sequence waits
     * alike.)
     */
    @Test
    void aBlockHoldingRowsDoesNotWaitForEverForTheExclusiveLock() throws Exception {
        ExecutorService pool = Executors.newCachedThreadPool();
        try (Connection b = cluster.connect(0); Connection y = cluster.connect(1)) {
            b.setAutoCommit(false);
            Statement sb = b.createStatement(), sy = y.createStatement();
            sb.executeUpdate("UPDATE cyc SET v = v + 1 WHERE id = 3");
            // committed at b; at a it waits on B
            pool.submit(() -> sy.executeUpdate("UPDATE cyc SET v = v + 100 WHERE id = 3")).get(30, TimeUnit.SECONDS);
            Future<?> ddlB = pool.submit(() -> sb.execute("CREATE TABLE cyc_more (i int)"));
            assertThatThrownBy(() -> ddlB.get(30, TimeUnit.SECONDS)).as("B's DDL waiting for the exclusive lock")
                    .isInstanceOfSatisfying(java.util.concurrent.ExecutionException.class,
                            e -> assertThat(((SQLException) e.getCause()).getSQLState()).isEqualTo("40001"));
            b.rollback();
        } finally {
            pool.shutdownNow();
        }
        assertThat(cluster.check().values()).containsOnly("same");
        try (Connection c = cluster.pgs.get(0).connect(); Statement st = c.createStatement(); ResultSet r = st.executeQuery("SELECT v FROM cyc WHERE id = 3")) {
            r.next();
            assertThat(r.getInt(1)).isEqualTo(100);
        }
    }

    /**
     * A block's INSERT into a table with a serial (or identity) column advances a sequence, which is neither
     * transactional nor ordered: run without the cluster lock, a replicated insert from another site that ran at the
     * block's origin meanwhile took the next value there only, and the block's ROLLBACK could not give its value back.
     * The block takes the exclusive lock before that statement instead, so the other insert waits for it everywhere.
     */
    @Test
    void aBlockThatAdvancesASequenceTakesTheExclusiveLockFirst() throws Exception {
        try (Connection c = cluster.connect(0); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE serials (id serial PRIMARY KEY, who text NOT NULL)");
            st.execute("CREATE TABLE idents (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, who text NOT NULL)");
        }
        ExecutorService pool = Executors.newCachedThreadPool();
        try {
            for (String table : List.of("serials", "idents")) {
                try (Connection x = cluster.connect(0); Connection y = cluster.connect(1)) {
                    x.setAutoCommit(false);
                    Statement sx = x.createStatement(), sy = y.createStatement();
                    sx.executeUpdate("INSERT INTO " + table + " (who) VALUES ('block')");
                    Future<?> other = pool.submit(() -> sy.executeUpdate("INSERT INTO " + table + " (who) VALUES ('other')"));
                    try {
                        other.get(2, TimeUnit.SECONDS);   // without the lock it runs at once, at a too
                    } catch (java.util.concurrent.TimeoutException expected) {
                        // it waits for the block's exclusive lock
                    }
                    x.rollback();
                    other.get(30, TimeUnit.SECONDS);
                }
                try (Connection c = cluster.connect(0); Statement st = c.createStatement()) {
                    st.executeUpdate("INSERT INTO " + table + " (who) VALUES ('after')");
                }
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(cluster.check().values()).containsOnly("same");
        for (int site = 0; site < 2; site++) {
            try (Connection c = cluster.pgs.get(site).connect(); Statement st = c.createStatement();
                 ResultSet r = st.executeQuery("SELECT (SELECT string_agg(id || who, ',' ORDER BY id) FROM serials), (SELECT string_agg(id || who, ',' ORDER BY id) FROM idents)")) {
                r.next();
                assertThat(r.getString(1)).as("site %d", site).isEqualTo("1other,2after");
                assertThat(r.getString(2)).as("site %d", site).isEqualTo("1other,2after");
            }
        }
    }

    /**
     * A block that advances a sequence inside a function's body: the classifier reads the body and sends the block to
     * the exclusive path before it runs (and a block that called a function other than a built-in would also have
     * PostgreSQL's locks checked for a sequence before PREPARE; blocks that ran only code the classifier reads skip that
     * check). Meanwhile an autocommit insert at the same site takes the next value; every site must end with the same
     * rows and the same sequence.
     */
    @Test
    void aSequenceAdvancedInsideAFunctionIsFoundAtCommit() throws Exception {
        try (Connection c = cluster.connect(0); Statement st = c.createStatement()) {
            st.execute("CREATE SEQUENCE tickets");
            st.execute("CREATE TABLE taken (id bigint PRIMARY KEY, who text NOT NULL)");
            st.execute("CREATE FUNCTION take_ticket() RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN RETURN nextval('tickets'); END $$");
        }
        ExecutorService pool = Executors.newCachedThreadPool();
        try (Connection x = cluster.connect(0); Connection y = cluster.connect(0)) {
            x.setAutoCommit(false);
            Statement sx = x.createStatement(), sy = y.createStatement();
            try (ResultSet r = sx.executeQuery("SELECT take_ticket()")) { r.next(); }
            sx.executeUpdate("INSERT INTO taken VALUES (1000, 'block')");
            Future<?> other = pool.submit(() -> sy.executeUpdate("INSERT INTO taken SELECT take_ticket(), 'other'"));
            try {
                other.get(2, TimeUnit.SECONDS);   // it runs at once unless the block holds the exclusive lock already
            } catch (java.util.concurrent.TimeoutException expected) {
                // it waits for the block's exclusive lock
            }
            try {
                x.commit();
            } catch (java.sql.SQLException e) {
                assertThat(e.getSQLState()).isEqualTo("40001");   // it took the exclusive lock at COMMIT, and something committed meanwhile
            }
            other.get(30, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        cluster.awaitQuiescent();
        assertThat(cluster.check().values()).containsOnly("same");
        List<String> seqs = new java.util.ArrayList<>();
        for (int site = 0; site < 2; site++)
            try (Connection c = cluster.pgs.get(site).connect(); Statement st = c.createStatement();
                 ResultSet r = st.executeQuery("SELECT last_value || '/' || is_called FROM tickets")) {
                r.next();
                seqs.add(r.getString(1));
            }
        assertThat(seqs.get(1)).isEqualTo(seqs.get(0));
    }

    private static void awaitPrepared(int site) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            try (Connection c = cluster.pgs.get(site).connect(); Statement st = c.createStatement();
                 ResultSet r = st.executeQuery("SELECT count(*) FROM pg_prepared_xacts")) {
                r.next();
                if (r.getInt(1) > 0) return;
            }
            if (System.nanoTime() > end) throw new AssertionError("no transaction prepared at site " + site);
            Thread.sleep(20);
        }
    }
}
