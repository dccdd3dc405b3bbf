package org.wanrep.frontend;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** psql and pgbench, unchanged, through the proxies of a three-site cluster. */
class PsqlAndPgbenchTest {
    static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = new TestCluster(List.of("a", "b", "c"), "none", Map.of("delivery", "agreed"));
        ClientTools.Result init = ClientTools.pgbench(cluster.proxyPort(0), "-i", "-s", "1", "-q");
        assertThat(init.exit()).as(init.output()).isZero();
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) cluster.close();
    }

    private static void assertReplicasIdentical() throws Exception {
        assertThat(cluster.check()).allSatisfy((t, v) -> assertThat(v).as(t).isEqualTo("same"));
    }

    @Test
    void psqlScriptWithCopyTransactionsAndErrors() throws Exception {
        String script = """
                CREATE TABLE items(id int PRIMARY KEY, name text NOT NULL, price numeric(10,2), added timestamptz DEFAULT now());
                INSERT INTO items(id, name, price) VALUES (1, 'pen', 1.50), (2, 'ink', 7.25);
                COPY items(id, name, price) FROM STDIN;
                3\tpaper\t2.00
                4\tstapler, "heavy"\t12.99
                \\.
                BEGIN;
                UPDATE items SET price = price * 2 WHERE id = 1;
                SAVEPOINT s;
                INSERT INTO items(id, name) VALUES (1, 'duplicate');
                ROLLBACK TO s;
                INSERT INTO items(id, name, price) VALUES (5, 'eraser', 0.99);
                COMMIT;
                INSERT INTO items(id, name) VALUES (2, 'duplicate outside a block');
                SELECT 1/0;
                SELECT count(*) AS n, sum(price) AS total FROM items;
                """;
        ClientTools.Result r = ClientTools.psql(cluster.proxyPort(1), script);
        assertThat(r.output()).contains("COPY 2").contains("duplicate key value").contains("division by zero").contains("26.23");
        cluster.awaitQuiescent();   // another site applies what site 1 committed a little later: no real-time order across sites
        try (Connection c = cluster.connect(2); Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*), sum(price) FROM items")) {
            rs.next();
            assertThat(rs.getInt(1)).isEqualTo(5);
            assertThat(rs.getBigDecimal(2)).isEqualByComparingTo("26.23");
        }
        assertReplicasIdentical();
    }

    @ParameterizedTest
    @ValueSource(strings = {"simple", "extended", "prepared"})
    void pgbenchRunsLeaveIdenticalReplicas(String mode) throws Exception {
        long before = historyRows();
        // clients at two sites at once; conflicting blocks that lose the exclusive race are retried
        ClientTools.Result[] other = new ClientTools.Result[1];
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                other[0] = ClientTools.pgbench(cluster.proxyPort(2), "-n", "-M", mode, "-c", "2", "-t", "20", "--max-tries", "1000");
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        ClientTools.Result r = ClientTools.pgbench(cluster.proxyPort(1), "-n", "-M", mode, "-c", "2", "-t", "20", "--max-tries", "1000");
        t.join();
        for (ClientTools.Result x : new ClientTools.Result[] {r, other[0]}) {
            assertThat(x.exit()).as(x.output()).isZero();
            assertThat(x.output()).contains("number of transactions actually processed: 40/40");
        }
        cluster.awaitQuiescent();
        assertThat(historyRows()).isEqualTo(before + 80);
        // a select-only run is local
        ClientTools.Result s = ClientTools.pgbench(cluster.proxyPort(0), "-M", mode, "-S", "-c", "2", "-t", "50");
        assertThat(s.exit()).as(s.output()).isZero();
        assertReplicasIdentical();
    }

    private static long historyRows() throws Exception {
        try (Connection c = cluster.connect(0); Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM pgbench_history")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
