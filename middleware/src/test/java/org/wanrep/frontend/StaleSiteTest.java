package org.wanrep.frontend;

import org.junit.jupiter.api.Test;
import org.wanrep.site.Site;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A site whose replica missed transactions the others committed must not serve (issue: a restarted
 * site answered reads from a stale replica and accepted updates). With agreed delivery (not uniform:
 * what it delivered last may not be what the others ordered) it cannot catch up: started again after a
 * crash of the sequencer's site, it refuses to start and never opens its port. (Safe delivery catches
 * up: {@code RejoinTest}.)
 */
class StaleSiteTest {
    @Test
    void theSequencersSiteStartedAgainAfterTheOthersCommittedRefusesToStart() throws Exception {
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of("delivery", "agreed"))) {
            try (Connection a = c.connect(0); Statement st = a.createStatement()) {
                st.execute("CREATE TABLE t (id int PRIMARY KEY, v int)");
            }
            c.crash(0);   // a: the first site orders
            try (Connection b = c.connect(1); Statement st = b.createStatement()) {
                for (int i = 1; i <= 20; i++) st.execute("INSERT INTO t VALUES (" + i + ", " + i + ")");
            }
            assertRefusesToStart(c, "a");
            // the survivors still serve, identical
            try (Connection x = c.connect(2); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM t")) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(20);
            }
            assertThat(c.check(List.of(1, 2)).values()).containsOnly("same");
        }
    }

    private static void assertRefusesToStart(TestCluster c, String site) {
        int port = c.config.forSite(site).getInt("proxy.port");
        assertThatThrownBy(() -> Site.start(c.config, site, Duration.ofSeconds(60)))
                .isInstanceOf(Site.SiteStoppedException.class)
                .hasMessageContaining("lacks");
        // and nothing listens on its port
        try (java.net.Socket s = new java.net.Socket()) {
            s.connect(new java.net.InetSocketAddress("127.0.0.1", port), 500);
            throw new AssertionError("site " + site + " accepts connections on " + port);
        } catch (java.io.IOException expected) {
            // refused: good
        }
    }
}
