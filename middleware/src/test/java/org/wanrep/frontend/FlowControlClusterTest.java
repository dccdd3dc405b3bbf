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
 * so its backlog grows; once it passes flow.max_backlog, updates from site a wait at a (before being
 * ordered) instead of piling up at c, and they go on when c drains; at b, whose wait is short, an
 * update is refused with SQLSTATE 53400 and not ordered.
 */
class FlowControlClusterTest {
    private static final int LIMIT = 5, CLIENTS = 4;

    @Test
    void updatesWaitAtTheirOriginWhileAnotherSiteIsOverItsBacklogLimitAndProceedWhenItDrains() throws Exception {
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of("delivery", "safe",
                "flow.max_backlog", Integer.toString(LIMIT), "flow.report_interval_ms", "20", "flow.wait_timeout_ms", "120000",
                "site.b.flow.wait_timeout_ms", "300"))) {
            try (Connection a = c.connect(0); Statement st = a.createStatement()) {
                st.execute("CREATE TABLE t (id int PRIMARY KEY, v bigint NOT NULL)");
                st.execute("INSERT INTO t VALUES (1, 0)");
            }
            c.awaitQuiescent();
            Site siteC = c.site(2);
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong done = new AtomicLong();
            ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
            List<Thread> clients = new ArrayList<>();
            try (Connection blocker = c.pgs.get(2).connect(); Statement b = blocker.createStatement()) {
                blocker.setAutoCommit(false);
                b.execute("LOCK TABLE t IN ACCESS EXCLUSIVE MODE");   // c's applies of t wait behind this
                for (int i = 0; i < CLIENTS; i++) {
                    clients.add(Thread.ofPlatform().start(() -> {
                        try (Connection x = c.connect(0); Statement s = x.createStatement()) {
                            while (!stop.get()) {
                                s.execute("UPDATE t SET v = v + 1 WHERE id = 1");
                                done.incrementAndGet();
                            }
                        } catch (SQLException e) {
                            errors.add(e.getSQLState() + " " + e.getMessage());
                        }
                    }));
                }
                long end = System.nanoTime() + 30_000_000_000L;
                while (siteC.engine().pending() <= LIMIT && System.nanoTime() < end) Thread.sleep(10);
                assertThat(siteC.engine().pending()).as("c's backlog grows while its applies are blocked").isGreaterThan(LIMIT);
                Thread.sleep(1000);   // reports travel; the clients at a now wait
                long before = done.get();
                Thread.sleep(2000);
                assertThat(done.get()).as("no update from a is ordered while c is over the limit").isEqualTo(before);
                int backlog = siteC.engine().pending();
                System.out.printf("c's backlog held at %d (limit %d); %d updates committed at a before the hold%n", backlog, LIMIT, before);
                assertThat(backlog).as("c's backlog stays bounded").isLessThan(100);
                try (Connection a = c.connect(0); Statement s = a.createStatement(); ResultSet r = s.executeQuery("SHOW wanrep.sites")) {
                    boolean seen = false;
                    while (r.next()) {
                        if (r.getString("site").equals("c")) {
                            seen = true;
                            assertThat(Integer.parseInt(r.getString("pending"))).isGreaterThan(LIMIT);
                            assertThat(r.getString("state")).contains("over flow.max_backlog");
                        }
                    }
                    assertThat(seen).as("SHOW wanrep.sites at a lists c's reported backlog").isTrue();
                }
                // at b updates wait no longer than 300 ms: then the client hears why, and nothing was ordered
                try (Connection b2 = c.connect(1); Statement s = b2.createStatement()) {
                    assertThatThrownBy(() -> s.execute("UPDATE t SET v = v + 1000000 WHERE id = 1"))
                            .isInstanceOf(SQLException.class).satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("53400"))
                            .hasMessageContaining("flow.max_backlog");
                }
                blocker.rollback();   // c drains
            }
            long resumedFrom = done.get();
            long end = System.nanoTime() + 30_000_000_000L;
            while (done.get() < resumedFrom + 50 && System.nanoTime() < end) Thread.sleep(10);
            stop.set(true);
            for (Thread t : clients) t.join(60_000);
            assertThat(errors).isEmpty();
            assertThat(done.get()).as("updates proceed once c drained").isGreaterThanOrEqualTo(resumedFrom + 50);
            c.awaitQuiescent();
            assertThat(c.check().values()).containsOnly("same");
            try (Connection x = c.pgs.get(2).connect(); Statement s = x.createStatement(); ResultSet r = s.executeQuery("SELECT v FROM t")) {
                r.next();
                assertThat(r.getLong(1)).isEqualTo(done.get());
            }
        }
    }
    /** As above with large updates: the backlog's bytes pass flow.max_backlog_mb long before its count passes flow.max_backlog. */
    @Test
    void largeUpdatesWaitWhileAnotherSitesBacklogHoldsMoreBytesThanTheLimit() throws Exception {
        String pad = "x".repeat(200_000);   // ~200 KB of SQL an update: 1 MiB is five or six of them
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of("delivery", "safe",
                "flow.max_backlog", "1000", "flow.max_backlog_mb", "1", "flow.report_interval_ms", "20", "flow.wait_timeout_ms", "120000"))) {
            try (Connection a = c.connect(0); Statement st = a.createStatement()) {
                st.execute("CREATE TABLE t (id int PRIMARY KEY, v bigint NOT NULL, pad text)");
                st.execute("INSERT INTO t VALUES (1, 0, '')");
            }
            c.awaitQuiescent();
            Site siteC = c.site(2);
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong done = new AtomicLong();
            ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
            List<Thread> clients = new ArrayList<>();
            try (Connection blocker = c.pgs.get(2).connect(); Statement b = blocker.createStatement()) {
                blocker.setAutoCommit(false);
                b.execute("LOCK TABLE t IN ACCESS EXCLUSIVE MODE");
                for (int i = 0; i < CLIENTS; i++) {
                    clients.add(Thread.ofPlatform().start(() -> {
                        try (Connection x = c.connect(0); Statement s = x.createStatement()) {
                            while (!stop.get()) {
                                s.execute("UPDATE t SET v = v + 1, pad = '" + pad + "' WHERE id = 1");
                                done.incrementAndGet();
                            }
                        } catch (SQLException e) {
                            errors.add(e.getSQLState() + " " + e.getMessage());
                        }
                    }));
                }
                long end = System.nanoTime() + 30_000_000_000L;
                while (siteC.engine().pendingBytes() <= 1 << 20 && System.nanoTime() < end) Thread.sleep(10);
                assertThat(siteC.engine().pendingBytes()).as("c's backlog grows while its applies are blocked").isGreaterThan(1 << 20);
                Thread.sleep(1000);
                long before = done.get();
                Thread.sleep(2000);
                assertThat(done.get()).as("no update from a is ordered while c holds more than 1 MiB").isEqualTo(before);
                int backlog = siteC.engine().pending();
                long bytes = siteC.engine().pendingBytes();
                System.out.printf("c's backlog held at %d transactions, %d bytes (limit 1 MiB)%n", backlog, bytes);
                assertThat(backlog).as("held by bytes, far below flow.max_backlog").isLessThan(20);
                assertThat(bytes).as("what c holds stays bounded").isLessThan(4L << 20);
                try (Connection a = c.connect(0); Statement s = a.createStatement(); ResultSet r = s.executeQuery("SHOW wanrep.sites")) {
                    boolean seen = false;
                    while (r.next()) {
                        if (!r.getString("site").equals("c")) continue;
                        seen = true;
                        assertThat(r.getString("state")).contains("over flow.max_backlog_mb");
                    }
                    assertThat(seen).isTrue();
                }
                blocker.rollback();
            }
            long resumedFrom = done.get();
            long end = System.nanoTime() + 30_000_000_000L;
            while (done.get() < resumedFrom + 20 && System.nanoTime() < end) Thread.sleep(10);
            stop.set(true);
            for (Thread t : clients) t.join(60_000);
            assertThat(errors).isEmpty();
            assertThat(done.get()).as("updates proceed once c drained").isGreaterThanOrEqualTo(resumedFrom + 20);
            c.awaitQuiescent();
            assertThat(c.check().values()).containsOnly("same");
        }
    }
}
