package org.wanrep.frontend;

import org.junit.jupiter.api.Test;
import org.wanrep.site.Site;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A site whose replica missed transactions the others committed must not serve from it (issue: a restarted
 * site answered reads from a stale replica and accepted updates). With agreed delivery (not uniform: what it
 * delivered last may not be what the others ordered at the same GSNs, so even its own log cannot be trusted)
 * the sequencer's site, started again after the others committed without it, replaces its replica by a
 * serving site's copy before it answers anything, then serves, identical to the others. (Safe delivery
 * catches up from the logs: {@code RejoinTest}.)
 */
class StaleSiteTest {
    @Test
    void theSequencersSiteStartedAgainUnderAgreedDeliveryTakesAStateTransferFirst() throws Exception {
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of("delivery", "agreed"))) {
            try (Connection a = c.connect(0); Statement st = a.createStatement()) {
                st.execute("CREATE TABLE t (id int PRIMARY KEY, v int)");
                st.execute("INSERT INTO t VALUES (0, 0)");
            }
            c.crash(0);   // a: the first site orders
            try (Connection b = c.connect(1); Statement st = b.createStatement()) {
                for (int i = 1; i <= 20; i++) st.execute("INSERT INTO t VALUES (" + i + ", " + i + ")");
            }
            Site a = c.restart(0);
            long end = System.nanoTime() + 60_000_000_000L;
            boolean served = false;
            while (!served && System.nanoTime() < end) {
                try (Connection x = c.connect(0); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM t")) {
                    rs.next();
                    assertThat(rs.getInt(1)).as("site a answered from a stale replica").isEqualTo(21);
                    served = true;
                } catch (SQLException e) {
                    assertThat(e.getSQLState()).as(e.getMessage()).isIn("57P03", "08006", "57P01", "3D000");
                    Thread.sleep(100);
                }
            }
            assertThat(served).as("site a serves again").isTrue();
            assertThat(a.engine().lastTransfer()).as("site a replaced its replica by a copy of another site's").isNotNull();
            // and takes updates again, ordered with the others'
            try (Connection x = c.connect(0); Statement st = x.createStatement()) {
                st.execute("INSERT INTO t VALUES (21, 21)");
            }
            assertThat(c.check(List.of(0, 1, 2)).values()).containsOnly("same");

            // a site added under agreed delivery: its copy comes at a GSN a majority holds
            assertThat(c.show(1, "SHOW wanrep.sites add d")).isEqualTo("a,b,c,d");
            Site d = c.addSite("d");
            assertThat(c.awaitServing(3, "t", 22, "57P03", "08006", "57P01", "3D000", "42P01").served()).as("site d serves").isTrue();
            assertThat(d.engine().lastTransfer()).as("site d got a copy").isNotNull();
            try (Connection x = c.connect(3); Statement st = x.createStatement()) {
                st.execute("INSERT INTO t VALUES (22, 22)");
            }
            c.awaitQuiescent();
            assertThat(c.check().values()).containsOnly("same");
        }
    }
}
