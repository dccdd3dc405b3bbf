package org.wanrep.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * psycopg 3, a stock Python client, as an application uses it: transactions over several round trips (autocommit
 * off), parameters bound by the server, retries on 40001. Clients at all three sites at once move money between
 * accounts and log each transfer; then the total is unchanged, the log holds exactly the committed transfers, and
 * every replica is identical. (`./wanrep test` and CI install python3-psycopg.)
 */
class PsycopgTest {
    static final int ACCOUNTS = 20, START = 1000;

    @Test
    void transfersFromEverySiteKeepTheTotalAndTheReplicasIdentical() throws Exception {
        Path python = Path.of("/usr/bin/python3");
        ClientTools.Result probe = ClientTools.run(List.of(python.toString(), "-c", "import psycopg"), null, 30);
        assertThat(probe.exit()).as("python3 with psycopg 3 (apt install python3-psycopg): %s", probe.output()).isZero();
        Path script = Path.of(PsycopgTest.class.getResource("/psycopg_transfers.py").toURI());
        long seed = new Random().nextInt(1_000_000);
        System.out.println("psycopg transfers: seed " + seed);
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of())) {
            try (Connection conn = c.connect(0); Statement st = conn.createStatement()) {
                st.execute("CREATE TABLE accounts(id int PRIMARY KEY, balance bigint NOT NULL)");
                st.execute("INSERT INTO accounts SELECT g, " + START + " FROM generate_series(1, " + ACCOUNTS + ") g");
                st.execute("CREATE TABLE transfers(id serial PRIMARY KEY, src int NOT NULL, dst int NOT NULL, amount int NOT NULL, seen bigint)");
            }
            c.awaitQuiescent();
            String ports = c.proxyPort(0) + "," + c.proxyPort(1) + "," + c.proxyPort(2);
            ClientTools.Result r = ClientTools.run(List.of(python.toString(), script.toString(), "--ports", ports, "--clients-per-site", "2",
                    "--seconds", "6", "--accounts", Integer.toString(ACCOUNTS), "--seed", Long.toString(seed)), null, 120);
            System.out.println(r.output());
            assertThat(r.exit()).as(r.output()).isZero();
            String json = r.output().lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b).orElseThrow();
            JsonNode sites = new ObjectMapper().readTree(json).get("sites");
            long committed = 0;
            assertThat(sites.size()).isEqualTo(3);
            for (JsonNode s : sites) {
                assertThat(s.get("failed").asLong()).as("errors other than retried conflicts: %s", s.get("errors")).isZero();
                committed += s.get("committed").asLong();
            }
            assertThat(committed).as("seed %d", seed).isPositive();
            c.awaitQuiescent();
            assertThat(c.check()).allSatisfy((t, v) -> assertThat(v).as(t).isEqualTo("same"));
            for (int i = 0; i < 3; i++)
                try (Connection conn = c.pgs.get(i).connect(); Statement st = conn.createStatement();
                     ResultSet rs = st.executeQuery("SELECT (SELECT sum(balance) FROM accounts), (SELECT count(*) FROM transfers)")) {
                    rs.next();
                    assertThat(rs.getLong(1)).as("total at site %d, seed %d", i, seed).isEqualTo((long) ACCOUNTS * START);
                    assertThat(rs.getLong(2)).as("logged transfers at site %d, seed %d", i, seed).isEqualTo(committed);
                }
        }
    }
}
