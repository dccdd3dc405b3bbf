package org.wanrep.frontend;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** pgjdbc, unchanged, against a two-site cluster without delay: every feature clients use. */
class PgjdbcThroughProxyTest {
    static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = new TestCluster(List.of("a", "b"), "none", Map.of("delivery", "safe"));
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) cluster.close();
    }

    private static void assertReplicasIdentical() throws Exception {
        assertThat(cluster.check()).allSatisfy((t, v) -> assertThat(v).as(t).isEqualTo("same"));
    }

    @Test
    void ddlAndAutocommitUpdatesReachEverySite() throws Exception {
        try (Connection c = cluster.connect(0); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE plain(id int primary key, v text)");
            assertThat(st.executeUpdate("INSERT INTO plain VALUES (1, 'one'), (2, 'two')")).isEqualTo(2);
            try (ResultSet rs = st.executeQuery("SELECT v FROM plain ORDER BY id")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo("one");
            }
        }
        cluster.awaitQuiescent();   // other sites commit a little after the origin answered
        try (Connection c = cluster.connect(1); Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM plain")) {
            rs.next();
            assertThat(rs.getInt(1)).isEqualTo(2);
        }
        assertReplicasIdentical();
        try (Connection c = cluster.connect(0); Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SHOW wanrep.phases")) {
            java.util.Map<String, Long> counts = new java.util.HashMap<>();
            while (rs.next()) counts.put(rs.getString("phase"), rs.getLong("count"));
            assertThat(counts.get("total")).as("updates that originated at site a").isGreaterThanOrEqualTo(2);
            assertThat(counts).containsKeys("delivery", "lock_wait", "execution", "commit");
        }
    }

    /**
     * A prepared update locks the row its bound key names, not its table: with a middleware read lock
     * held on row 1 at site a, a prepared update of row 2 from site a commits, and one of row 1 then waits
     * (pgjdbc binds server-prepared statements from the first use here; its values text or binary).
     */
    @Test
    void preparedUpdatesLockTheRowsTheirBoundKeysName() throws Exception {
        try (Connection c = cluster.connect(0); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE rowlocked(id int primary key, v int not null)");
            st.execute("INSERT INTO rowlocked VALUES (1, 0), (2, 0)");
        }
        cluster.awaitQuiescent();
        org.wanrep.txn.ReplicationEngine engine = cluster.site(0).engine();
        Object held = engine.lockLocal(new org.wanrep.lock.TableSet(java.util.Set.of("public.rowlocked"), java.util.Set.of(), false,
                Map.of("public.rowlocked", Map.of("1", org.wanrep.lock.LockMode.READ))), java.time.Duration.ofSeconds(5));
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try (Connection c1 = cluster.connect(0, "prepareThreshold=1"); Connection c2 = cluster.connect(0, "prepareThreshold=1")) {
            // row 2 first: it commits while row 1 is locked (commits follow the order, so an update of row 2 ordered
            // after the waiting one of row 1 would run at once but commit after it)
            java.util.concurrent.Future<Integer> second = pool.submit(() -> update(c2, 2));
            assertThat(second.get(10, java.util.concurrent.TimeUnit.SECONDS)).as("row 2 while row 1 is locked").isEqualTo(1);
            java.util.concurrent.Future<Integer> first = pool.submit(() -> update(c1, 1));
            Thread.sleep(300);
            assertThat(first.isDone()).as("row 1 waits for the lock on row 1").isFalse();
            engine.unlockLocal(held);
            held = null;
            assertThat(first.get(10, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo(1);
        } finally {
            if (held != null) engine.unlockLocal(held);
            pool.shutdownNow();
        }
        cluster.awaitQuiescent();
        assertReplicasIdentical();
    }

    private static int update(Connection c, int id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE rowlocked SET v = v + 1 WHERE id = ?")) {
            ps.setInt(1, id);
            return ps.executeUpdate();
        }
    }

    @Test
    void preparedBeyondThresholdBatchesReturningAndErrors() throws Exception {
        try (Connection c = cluster.connect(1); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE prep(id serial primary key, v int not null, at timestamptz default now())");
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO prep(v) VALUES (?)")) {
                for (int i = 0; i < 12; i++) {   // beyond prepareThreshold (5): named statements
                    ps.setInt(1, i);
                    assertThat(ps.executeUpdate()).isEqualTo(1);
                }
                for (int i = 0; i < 50; i++) {
                    ps.setInt(1, 100 + i);
                    ps.addBatch();
                }
                assertThat(ps.executeBatch()).hasSize(50);
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO prep(v) VALUES (?) RETURNING id", Statement.RETURN_GENERATED_KEYS)) {
                ps.setInt(1, 7);
                ps.executeUpdate();
                try (ResultSet keys = ps.getGeneratedKeys()) {
                    assertThat(keys.next()).isTrue();
                    assertThat(keys.getInt(1)).isEqualTo(63);
                }
            }
            assertThatThrownBy(() -> st.executeUpdate("INSERT INTO prep(id, v) VALUES (1, 1)"))
                    .isInstanceOf(SQLException.class).satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("23505"));
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO prep(v) VALUES (?)")) {
                ps.setInt(1, 1);
                ps.addBatch();
                ps.setNull(1, java.sql.Types.INTEGER);
                ps.addBatch();
                assertThatThrownBy(ps::executeBatch).isInstanceOf(BatchUpdateException.class);
            }
            try (ResultSet rs = st.executeQuery("SELECT count(*) FROM prep")) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(63);   // the failed batch left nothing
            }
            try (ResultSet rs = st.executeQuery("SELECT g, repeat('x', 100) FROM generate_series(1, 50000) g")) {
                int n = 0;
                while (rs.next()) n++;
                assertThat(n).isEqualTo(50000);
            }
        }
        assertReplicasIdentical();
    }

    @Test
    void autocommitOffBlocksCommitEverywhere() throws Exception {
        try (Connection c = cluster.connect(0); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE acct(id int primary key, balance int not null)");
            st.execute("INSERT INTO acct SELECT g, 100 FROM generate_series(1, 5) g");
            c.setAutoCommit(false);
            try (ResultSet rs = st.executeQuery("SELECT balance FROM acct WHERE id = 1")) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(100);
            }
            st.executeUpdate("UPDATE acct SET balance = balance - 10 WHERE id = 1");
            st.executeUpdate("UPDATE acct SET balance = balance + 10 WHERE id = 2");
            c.commit();
            st.executeUpdate("UPDATE acct SET balance = 0 WHERE id = 3");
            c.rollback();
            c.setAutoCommit(true);
        }
        cluster.awaitQuiescent();
        try (Connection c = cluster.connect(1); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT string_agg(balance::text, ',' ORDER BY id) FROM acct")) {
            rs.next();
            assertThat(rs.getString(1)).isEqualTo("90,110,100,100,100");
        }
        assertReplicasIdentical();
    }

    @Test
    void cancelInterruptsALocalQuery() throws Exception {
        try (Connection c = cluster.connect(0); Statement st = c.createStatement()) {
            Thread.ofVirtual().start(() -> {
                try {
                    Thread.sleep(500);
                    st.cancel();
                } catch (Exception ignored) {
                    // the assertion below fails if the cancel did not arrive
                }
            });
            assertThatThrownBy(() -> st.execute("SELECT pg_sleep(20)"))
                    .isInstanceOf(SQLException.class).satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("57014"));
            try (ResultSet rs = st.executeQuery("SELECT 1")) {
                assertThat(rs.next()).isTrue();
            }
        }
    }

    /**
     * Large results: streamed whole in autocommit, and fetched in pages through a named portal
     * (Execute with a row limit, PortalSuspended) inside a block, as pgjdbc does with a fetch size.
     */
    @Test
    void largeResultsStreamAndPageThroughTheProxy() throws Exception {
        try (Connection c = cluster.connect(0); Statement st = c.createStatement()) {
            try (ResultSet rs = st.executeQuery("SELECT g, repeat('x', 100) FROM generate_series(1, 200000) g")) {
                long n = 0, sum = 0;
                while (rs.next()) {
                    n++;
                    sum += rs.getLong(1);
                }
                assertThat(n).isEqualTo(200_000);
                assertThat(sum).isEqualTo(200_000L * 200_001 / 2);
            }
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("SELECT g FROM generate_series(1, ?) g ORDER BY g")) {
                ps.setFetchSize(1000);
                ps.setInt(1, 25_000);
                try (ResultSet rs = ps.executeQuery()) {
                    int expect = 1;
                    while (rs.next()) assertThat(rs.getInt(1)).isEqualTo(expect++);
                    assertThat(expect - 1).isEqualTo(25_000);
                }
            }
            c.commit();
            c.setAutoCommit(true);
            try (ResultSet rs = st.executeQuery("SELECT 1")) {
                assertThat(rs.next()).isTrue();
            }
        }
    }
}
