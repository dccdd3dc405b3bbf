package org.wanrep.frontend;

import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 10, defect 5: client sessions must not take the connections replication needs. Site b's
 * replica allows few connections; clients open sessions at b until the proxy refuses one as
 * PostgreSQL would (53300); an update from site a must still be applied at b meanwhile.
 */
class ReservedConnectionsTest {
    static final int MAX_CONNECTIONS = 25;

    @Test
    void clientsCannotStarveReplicationOfConnections() throws Exception {
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "none", Map.of("delivery", "safe"), l -> l, (i, pg) -> {
            try (Connection conn = pg.connect(); Statement st = conn.createStatement()) {
                st.execute("CREATE TABLE r(id int PRIMARY KEY)");   // directly: b's pool has not been used yet
                if (i == 1) st.execute("ALTER SYSTEM SET max_connections = " + MAX_CONNECTIONS);
            }
            if (i == 1) {
                pg.stop();
                pg.start();
            }
        })) {
            List<Connection> clients = new ArrayList<>();
            SQLException refused = null;
            try {
                for (int k = 0; k < 2 * MAX_CONNECTIONS && refused == null; k++) {
                    try {
                        clients.add(c.connect(1));
                    } catch (SQLException e) {
                        refused = e;
                    }
                }
                assertThat((Object) refused).as("a client past the limit is refused").isNotNull();
                assertThat(refused.getSQLState()).as(refused.getMessage()).isEqualTo("53300");
                assertThat(refused.getMessage()).contains("sorry, too many clients already");
                assertThat(clients).as("sessions served before the limit").isNotEmpty();

                try (Connection a = c.connect(0); Statement st = a.createStatement()) {
                    st.execute("INSERT INTO r VALUES (1)");
                }
                long end = System.nanoTime() + 20_000_000_000L;
                int rows = 0;
                while (rows == 0 && System.nanoTime() < end) {
                    try (Connection b = c.pgs.get(1).connect(); Statement st = b.createStatement();
                         ResultSet rs = st.executeQuery("SELECT count(*) FROM r")) {
                        rs.next();
                        rows = rs.getInt(1);
                    }
                    if (rows == 0) Thread.sleep(100);
                }
                assertThat(rows).as("a's update applied at b while b's clients hold every session").isEqualTo(1);
                // a session that ends gives its place back
                // (once the proxy has seen it end: its session notices the closed socket a moment later, as a
                // PostgreSQL backend does, so a connection made at once may still find the place taken)
                clients.remove(0).close();
                Connection again = null;
                for (long until = System.nanoTime() + 10_000_000_000L; again == null; Thread.sleep(100)) {
                    try {
                        again = c.connect(1);
                    } catch (SQLException e) {
                        if (!"53300".equals(e.getSQLState()) || System.nanoTime() > until) throw e;
                    }
                }
                clients.add(again);
            } finally {
                for (Connection x : clients) x.close();
            }
            assertThat(c.check()).allSatisfy((t, v) -> assertThat(v).as(t).isEqualTo("same"));
        }
    }
}
