package org.wanrep.frontend;

import org.junit.jupiter.api.Test;
import org.wanrep.site.Site;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Certified blocks and a site that crashes (issue 13: "after a crash, a prepared transaction left at a site is resolved
 * from the total-order log, committed if it certified, else rolled back, never by guess"). Before, a site whose
 * replica held a prepared transaction did not start at all, and one catching up stopped at the first certified block
 * it replayed. Here site a crashes between its block's certification and its COMMIT PREPARED, with a second prepared
 * transaction that was never ordered, while pgjdbc clients at b and c keep running blocks; a starts again, catches up
 * (its own committed blocks are not run twice), commits the certified one in its turn, rolls back the other, and the
 * replicas end identical with the money preserved.
 */
class CertifiedRejoinTest {
    private static final int ACCOUNTS = 10;

    @Test
    void aRestartedSiteResolvesItsPreparedBlocksFromTheTotalOrder() throws Exception {
        long seed = System.nanoTime();
        System.out.println("seed " + seed);
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of("delivery", "safe", "blocks", "certify"))) {
            try (Connection conn = c.connect(0); Statement st = conn.createStatement()) {
                st.execute("CREATE TABLE acct(id int PRIMARY KEY, bal int NOT NULL)");
                st.execute("INSERT INTO acct SELECT g, 100 FROM generate_series(1, " + ACCOUNTS + ") g");
                st.execute("CREATE TABLE u(n bigint)");
                st.execute("CREATE TABLE w(id int PRIMARY KEY, v int NOT NULL)");
                st.execute("INSERT INTO w VALUES (1, 0)");
            }
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger committed = new AtomicInteger();
            // blocks from b and c all along, on accounts 3..10 (a's own blocks below use 1 and 2)
            List<Thread> load = List.of(transfers(c, 1, seed, stop, committed), transfers(c, 2, seed + 1, stop, committed));
            try (Connection conn = c.connect(0)) {   // a's blocks that commit normally: a replay must not run them twice
                conn.setAutoCommit(false);
                // retried on 40001 as any client would: the snapshot position of a block is what its site has finished,
                // which may still lie before the GSN of the block it just committed (b's and c's deliveries in between)
                for (int i = 0; i < 5; ) {
                    try (Statement st = conn.createStatement()) {
                        st.executeUpdate("UPDATE acct SET bal = bal - 1 WHERE id = 1");
                        st.executeUpdate("UPDATE acct SET bal = bal + 1 WHERE id = 2");
                        conn.commit();
                        i++;
                    } catch (SQLException e) {
                        if (!"40001".equals(e.getSQLState())) throw e;
                        conn.rollback();
                    }
                }
            }
            try (Connection conn = c.connect(0)) {
                // a block of a on another table: its GSN is not known when it commits (at PREPARE), so its position records
                // nothing of it; its mark in the replica, or a later transaction's position, keeps a replay after the
                // restart from running it again (commits follow the order, so it cannot commit after a stuck earlier update)
                conn.setAutoCommit(false);
                try (Statement st = conn.createStatement()) {
                    st.executeUpdate("UPDATE w SET v = v + 1 WHERE id = 1");
                }
                conn.commit();
            }
            // a's next block is certified but waits at a for its locks, behind b's update that a lock at a's replica holds up
            Connection direct = c.pgs.get(0).connect();
            direct.setAutoCommit(false);
            try (Statement st = direct.createStatement()) {
                st.execute("LOCK TABLE u IN ACCESS EXCLUSIVE MODE");
            }
            try (Connection conn = c.connect(1); Statement st = conn.createStatement()) {
                st.executeUpdate("INSERT INTO u SELECT sum(bal) FROM acct");   // reads acct: a's block is granted after it
            }
            Thread.sleep(300);
            Connection blockConn = c.connect(0);
            blockConn.setAutoCommit(false);
            try (Statement st = blockConn.createStatement()) {
                st.executeUpdate("UPDATE acct SET bal = bal - 7 WHERE id = 1");
                st.executeUpdate("UPDATE acct SET bal = bal + 7 WHERE id = 2");
            }
            Thread committer = Thread.ofPlatform().start(() -> {
                try {
                    blockConn.commit();
                } catch (SQLException e) {
                    System.out.println("a's block: " + e.getSQLState() + " " + e.getMessage());   // a crashed before answering
                }
            });
            awaitBalance(c, 1, 1, 88);   // certified: b replayed it (100 - 5 - 7)
            c.crash(0);
            committer.join(10_000);
            assertThat(preparedAt(c, 0)).as("a's certified block, prepared, not committed").hasSize(1);
            direct.rollback();   // what held b's update up at a
            direct.close();
            // and a prepared transaction of a block never ordered (its member never in any view), on an account b and c use
            try (Connection x = c.pgs.get(0).connect(); Statement st = x.createStatement()) {
                st.execute("BEGIN");
                st.execute("UPDATE acct SET bal = bal + 1000 WHERE id = 9");
                st.execute("PREPARE TRANSACTION 'wanrep:a#42@a/1'");
            }
            Thread.sleep(1000);   // b and c go on without a
            Site s = c.restart(0);
            // while it rejoins, a refuses (57P03) or ends a session it cannot serve yet (as the other rejoin tests accept:
            // one full run saw 08006 once); it never answers from a replica that is behind
            assertThat(c.awaitServing(0, "acct", ACCOUNTS, "57P03", "08006", "57P01").served()).as("a serves again").isTrue();
            assertThat(s.engine().failure()).isNull();
            Thread.sleep(500);   // a takes part in the load again
            stop.set(true);
            for (Thread t : load) t.join();
            c.awaitQuiescent();
            assertThat(preparedAt(c, 0)).as("nothing left prepared at a").isEmpty();
            assertThat(s.engine().leftPrepared()).isZero();
            assertThat(c.check()).allSatisfy((t, v) -> assertThat(v).as(t).isEqualTo("same"));
            for (int i = 0; i < 3; i++)
                try (Connection x = c.pgs.get(i).connect(); Statement st = x.createStatement();
                     ResultSet rs = st.executeQuery("SELECT sum(bal), (SELECT bal FROM acct WHERE id = 1) FROM acct")) {
                    rs.next();
                    assertThat(rs.getLong(1)).as("money at %s", c.sites.get(i)).isEqualTo(100L * ACCOUNTS);
                    assertThat(rs.getInt(2)).as("account 1 at %s: a's six blocks, once each", c.sites.get(i)).isEqualTo(88);
                }
            for (int i = 0; i < 3; i++)
                try (Connection x = c.pgs.get(i).connect(); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SELECT v FROM w")) {
                    rs.next();
                    assertThat(rs.getInt(1)).as("a's block on w at %s, once", c.sites.get(i)).isEqualTo(1);
                }
            assertThat(committed.get()).as("blocks b and c committed").isPositive();
            System.out.println("blocks committed at b and c: " + committed.get());
        }
    }

    /** pgjdbc with autocommit off at site {@code k}: transfers between accounts 3..10, retried on 40001, until stopped. */
    private static Thread transfers(TestCluster c, int k, long seed, AtomicBoolean stop, AtomicInteger committed) {
        return Thread.ofPlatform().start(() -> {
            Random rnd = new Random(seed);
            try (Connection conn = c.connect(k)) {
                conn.setAutoCommit(false);
                while (!stop.get()) {
                    int from = 3 + rnd.nextInt(ACCOUNTS - 2), to = 3 + rnd.nextInt(ACCOUNTS - 2);
                    try (Statement st = conn.createStatement()) {
                        st.executeUpdate("UPDATE acct SET bal = bal - 1 WHERE id = " + from);
                        st.executeUpdate("UPDATE acct SET bal = bal + 1 WHERE id = " + to);
                        conn.commit();
                        committed.incrementAndGet();
                    } catch (SQLException e) {
                        if (!List.of("40001", "40P01", "53400").contains(e.getSQLState())) throw e;
                        conn.rollback();
                    }
                }
            } catch (SQLException e) {
                throw new IllegalStateException("site " + c.sites.get(k) + ": " + e.getSQLState() + " " + e.getMessage(), e);
            }
        });
    }

    private static void awaitBalance(TestCluster c, int site, int id, int bal) throws Exception {
        long end = System.nanoTime() + 20_000_000_000L;
        while (System.nanoTime() < end) {
            try (Connection x = c.pgs.get(site).connect(); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SELECT bal FROM acct WHERE id = " + id)) {
                rs.next();
                if (rs.getInt(1) == bal) return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("account " + id + " at " + c.sites.get(site) + " never reached " + bal);
    }

    private static List<String> preparedAt(TestCluster c, int site) throws Exception {
        List<String> gids = new java.util.ArrayList<>();
        try (Connection x = c.pgs.get(site).connect(); Statement st = x.createStatement();
             ResultSet rs = st.executeQuery("SELECT gid FROM pg_prepared_xacts WHERE gid LIKE 'wanrep:%'")) {
            while (rs.next()) gids.add(rs.getString(1));
        }
        return gids;
    }
}
