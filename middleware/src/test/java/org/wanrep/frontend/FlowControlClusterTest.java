package org.wanrep.frontend;

import org.junit.jupiter.api.Test;
import org.wanrep.site.Site;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Flow control across sites: site c's applies block on a table lock taken directly in its PostgreSQL,
 * so its backlog grows; once it passes flow.max_backlog (or flow.max_backlog_mb), updates from site a wait at a
 * (before being ordered) instead of piling up at c, and they go on when c drains; at b, whose wait is short, an
 * update is refused with SQLSTATE 53400 and not ordered.
 */
class FlowControlClusterTest {
    private static final int LIMIT = 5, CLIENTS = 4;

    @Test
    void updatesWaitAtTheirOriginWhileAnotherSiteIsOverItsBacklogLimitAndProceedWhenItDrains() throws Exception {
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of("delivery", "safe",
                "flow.max_backlog", Integer.toString(LIMIT), "flow.report_interval_ms", "20", "flow.wait_timeout_ms", "120000",
                "site.b.flow.wait_timeout_ms", "300"))) {
            Site siteC = create(c, "CREATE TABLE t (id int PRIMARY KEY, v bigint NOT NULL)", "INSERT INTO t VALUES (1, 0)");
            try (BlockedLoad load = new BlockedLoad(c, "UPDATE t SET v = v + 1 WHERE id = 1")) {
                long end = System.nanoTime() + 30_000_000_000L;
                while (siteC.engine().pending() <= LIMIT && System.nanoTime() < end) Thread.sleep(10);
                assertThat(siteC.engine().pending()).as("c's backlog grows while its applies are blocked").isGreaterThan(LIMIT);
                long before = load.heldBack();
                int backlog = siteC.engine().pending();
                System.out.printf("c's backlog held at %d (limit %d); %d updates committed at a before the hold%n", backlog, LIMIT, before);
                assertThat(backlog).as("c's backlog stays bounded").isLessThan(100);
                Map<String, String> row = rowOfC(c);
                assertThat(Integer.parseInt(row.get("pending"))).isGreaterThan(LIMIT);
                assertThat(row.get("state")).contains("over flow.max_backlog");
                // at b updates wait no longer than 300 ms: then the client hears why, and nothing was ordered
                try (Connection b2 = c.connect(1); Statement s = b2.createStatement()) {
                    assertThatThrownBy(() -> s.execute("UPDATE t SET v = v + 1000000 WHERE id = 1"))
                            .isInstanceOf(SQLException.class).satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("53400"))
                            .hasMessageContaining("flow.max_backlog");
                }
                load.releaseAndProceed(50);
                c.awaitQuiescent();
                assertThat(c.check().values()).containsOnly("same");
                try (Connection x = c.pgs.get(2).connect(); Statement s = x.createStatement(); ResultSet r = s.executeQuery("SELECT v FROM t")) {
                    r.next();
                    assertThat(r.getLong(1)).isEqualTo(load.done.get());
                }
            }
        }
    }

    /** As above with large updates: the backlog's bytes pass flow.max_backlog_mb long before its count passes flow.max_backlog. */
    @Test
    void largeUpdatesWaitWhileAnotherSitesBacklogHoldsMoreBytesThanTheLimit() throws Exception {
        String pad = "x".repeat(200_000);   // ~200 KB of SQL an update: 1 MiB is five or six of them
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of("delivery", "safe",
                "flow.max_backlog", "1000", "flow.max_backlog_mb", "1", "flow.report_interval_ms", "20", "flow.wait_timeout_ms", "120000"))) {
            Site siteC = create(c, "CREATE TABLE t (id int PRIMARY KEY, v bigint NOT NULL, pad text)", "INSERT INTO t VALUES (1, 0, '')");
            try (BlockedLoad load = new BlockedLoad(c, "UPDATE t SET v = v + 1, pad = '" + pad + "' WHERE id = 1")) {
                long end = System.nanoTime() + 30_000_000_000L;
                while (siteC.engine().pendingBytes() <= 1 << 20 && System.nanoTime() < end) Thread.sleep(10);
                assertThat(siteC.engine().pendingBytes()).as("c's backlog grows while its applies are blocked").isGreaterThan(1 << 20);
                load.heldBack();
                int backlog = siteC.engine().pending();
                long bytes = siteC.engine().pendingBytes();
                System.out.printf("c's backlog held at %d transactions, %d bytes (limit 1 MiB)%n", backlog, bytes);
                assertThat(backlog).as("held by bytes, far below flow.max_backlog").isLessThan(20);
                assertThat(bytes).as("what c holds stays bounded").isLessThan(4L << 20);
                assertThat(rowOfC(c).get("state")).contains("over flow.max_backlog_mb");
                load.releaseAndProceed(20);
                c.awaitQuiescent();
                assertThat(c.check().values()).containsOnly("same");
            }
        }
    }

    /** Creates and fills table t through site a; site c once every site has it. */
    private static Site create(TestCluster c, String... sql) throws Exception {
        try (Connection a = c.connect(0); Statement st = a.createStatement()) {
            for (String s : sql) st.execute(s);
        }
        c.awaitQuiescent();
        return c.site(2);
    }

    /** Site c's state and pending count as SHOW wanrep.sites at site a gives them. */
    private static Map<String, String> rowOfC(TestCluster c) throws SQLException {
        try (Connection a = c.connect(0); Statement s = a.createStatement(); ResultSet r = s.executeQuery("SHOW wanrep.sites")) {
            while (r.next()) if (r.getString("site").equals("c")) return Map.of("state", r.getString("state"), "pending", r.getString("pending"));
        }
        throw new AssertionError("SHOW wanrep.sites at a does not list c's reported backlog");
    }

    /** {@link #CLIENTS} clients at site a running one update in a loop while site c's applies of t wait behind a table lock in its PostgreSQL. */
    private static final class BlockedLoad implements AutoCloseable {
        final AtomicLong done = new AtomicLong();
        private final ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        private final AtomicBoolean stop = new AtomicBoolean();
        private final List<Thread> clients = new ArrayList<>();
        private final Connection blocker;

        BlockedLoad(TestCluster c, String update) throws SQLException {
            blocker = c.pgs.get(2).connect();
            blocker.setAutoCommit(false);
            try (Statement b = blocker.createStatement()) {
                b.execute("LOCK TABLE t IN ACCESS EXCLUSIVE MODE");   // c's applies of t wait behind this
            }
            for (int i = 0; i < CLIENTS; i++) {
                clients.add(Thread.ofPlatform().start(() -> {
                    try (Connection x = c.connect(0); Statement s = x.createStatement()) {
                        while (!stop.get()) {
                            s.execute(update);
                            done.incrementAndGet();
                        }
                    } catch (SQLException e) {
                        errors.add(e.getSQLState() + " " + e.getMessage());
                    }
                }));
            }
        }

        /** Once the reports have travelled, no update from a is ordered for 2 s; the updates done before. */
        long heldBack() throws InterruptedException {
            Thread.sleep(1000);
            long before = done.get();
            Thread.sleep(2000);
            assertThat(done.get()).as("no update from a is ordered while c is over the limit").isEqualTo(before);
            return before;
        }

        /** c drains; the clients commit {@code more} updates, then stop, without an error. */
        void releaseAndProceed(int more) throws Exception {
            blocker.rollback();
            long resumedFrom = done.get(), end = System.nanoTime() + 30_000_000_000L;
            while (done.get() < resumedFrom + more && System.nanoTime() < end) Thread.sleep(10);
            stopClients();
            assertThat(errors).isEmpty();
            assertThat(done.get()).as("updates proceed once c drained").isGreaterThanOrEqualTo(resumedFrom + more);
        }

        private void stopClients() throws InterruptedException {
            stop.set(true);
            for (Thread t : clients) t.join(60_000);
        }

        @Override public void close() throws Exception {
            stopClients();
            blocker.close();
        }
    }
}
