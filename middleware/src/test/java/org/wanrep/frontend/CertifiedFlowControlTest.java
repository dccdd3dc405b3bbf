package org.wanrep.frontend;

import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A certified block's CERTIFY is never held back by flow control. Block P at site a writes row 1; updates from site b
 * are delivered, the first waits at a in PostgreSQL on P's row and the others for their turn behind it, so a's backlog
 * passes flow.max_backlog. P's COMMIT prepares it and sends its CERTIFY: had flow control held that back until the
 * backlog drained, the backlog would have waited for P's row and P for the backlog (seen in peer-bench's every-site
 * run: a site stalled until flow.wait_timeout_ms, then 53400). Now the CERTIFY is ordered at once, certification
 * aborts P (an update delivered after its snapshot wrote its row), and everything goes on.
 */
class CertifiedFlowControlTest {
    private static final int LIMIT = 2;

    @Test
    void aPreparedBlocksCertificationIsNotHeldBackByTheBacklogItsRowsCause() throws Exception {
        try (TestCluster c = new TestCluster(List.of("a", "b"), "lan", Map.of("delivery", "safe", "blocks", "certify",
                "flow.max_backlog", Integer.toString(LIMIT), "flow.report_interval_ms", "20", "flow.wait_timeout_ms", "60000"))) {
            try (Connection a = c.connect(0); Statement st = a.createStatement()) {
                st.execute("CREATE TABLE acc (id int PRIMARY KEY, bal int NOT NULL)");
                st.execute("INSERT INTO acc SELECT g, 100 FROM generate_series(1, 10) g");
            }
            c.awaitQuiescent();
            ExecutorService pool = Executors.newCachedThreadPool();
            try (Connection p = c.connect(0); Statement sp = p.createStatement()) {
                p.setAutoCommit(false);
                sp.executeQuery("SELECT bal FROM acc WHERE id = 1").close();
                sp.executeUpdate("UPDATE acc SET bal = bal + 1 WHERE id = 1");   // P holds row 1 at a
                List<Future<?>> updates = new ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    int row = i == 0 ? 1 : i + 1;
                    updates.add(pool.submit(() -> {
                        try (Connection y = c.connect(1); Statement s = y.createStatement()) {
                            s.executeUpdate("UPDATE acc SET bal = bal + 10 WHERE id = " + row);
                        }
                        return null;
                    }));
                    if (i == 0) Thread.sleep(300);   // delivered first: it is the one that waits on P's row at a
                }
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (c.site(0).engine().pending() <= LIMIT && System.nanoTime() < end) Thread.sleep(10);
                assertThat(c.site(0).engine().pending()).as("a's backlog behind P's row").isGreaterThan(LIMIT);
                long t0 = System.nanoTime();
                assertThatThrownBy(p::commit).isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("40001"));
                assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0)).as("seconds P's COMMIT took").isLessThan(10);
                p.rollback();
                for (Future<?> f : updates) f.get(30, TimeUnit.SECONDS);
            } finally {
                pool.shutdownNow();
            }
            c.awaitQuiescent();
            assertThat(c.check().values()).containsOnly("same");
            try (Connection a = c.connect(1); Statement st = a.createStatement(); var rs = st.executeQuery("SELECT sum(bal) FROM acc")) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(1000 + 60);
            }
        }
    }
}
