package org.wanrep.frontend;

import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sites compare what their replicas made of every ordered update. Before, a request that succeeded at its origin
 * and failed at the others (here: a table created directly in site a's replica, behind the proxy) was taken by the
 * others for a deterministic failure: a kept the row, the client had its acknowledgement, and the replicas differed
 * silently for good. Now a, whose outcomes the rest of the view does not share, stops; b and c go on serving.
 */
class OutcomeAuditTest {
    @Test
    void aSiteWhoseOutcomesTheOthersDoNotShareStops() throws Exception {
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of("audit.report_interval_ms", "100"))) {
            try (Connection conn = c.connect(0); Statement st = conn.createStatement()) {
                st.execute("CREATE TABLE t(id int PRIMARY KEY, v int)");
                for (int i = 1; i <= 20; i++) st.executeUpdate("INSERT INTO t VALUES (" + i + ", " + i + ")");
            }
            // alike everywhere so far: the sites compared ranges and found nothing
            long until = System.nanoTime() + 10_000_000_000L;
            while (c.site(1).engine().outcomeAudit().compared() == 0 && System.nanoTime() < until) Thread.sleep(50);
            assertThat(c.site(1).engine().outcomeAudit().compared()).as("ranges b compared").isPositive();
            for (int i = 0; i < 3; i++) assertThat(c.site(i).engine().failure()).isNull();

            try (Connection direct = c.pgs.get(0).connect(); Statement st = direct.createStatement()) {
                st.execute("CREATE TABLE only_at_a(id int PRIMARY KEY)");   // behind the proxy, at a's replica only
            }
            try (Connection conn = c.connect(0); Statement st = conn.createStatement()) {
                // succeeds at a (its origin, whose client is told so), fails with 42P01 at b and c
                assertThat(st.executeUpdate("INSERT INTO only_at_a VALUES (1)")).isEqualTo(1);
            }
            until = System.nanoTime() + 20_000_000_000L;
            while (c.site(0).engine().failure() == null && System.nanoTime() < until) Thread.sleep(50);
            assertThat(c.site(0).engine().failure()).as("a's stop").contains("replica differs").contains("outcomes");
            c.site(0).awaitStopped();
            c.stopped(0);
            Thread.sleep(500);   // more reports: b and c still agree with each other
            for (int i = 1; i < 3; i++) assertThat(c.site(i).engine().failure()).as("site %d", i).isNull();
            try (Connection conn = c.connect(1); Statement st = conn.createStatement()) {
                st.executeUpdate("UPDATE t SET v = v + 1 WHERE id = 2");
                try (ResultSet rs = st.executeQuery("SELECT v FROM t WHERE id = 2")) {
                    rs.next();
                    assertThat(rs.getInt(1)).isEqualTo(3);
                }
            }
            assertThat(c.check(List.of(1, 2))).allSatisfy((t, v) -> assertThat(v).as(t).isEqualTo("same"));
        }
    }
}
