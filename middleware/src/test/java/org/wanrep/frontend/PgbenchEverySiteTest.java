package org.wanrep.frontend;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * pgbench's builtin tpcb-like, unchanged, from every site at once: as interactive blocks (BEGIN ...
 * END over several round trips) and as one request (the five statements joined with {@code \;}), in
 * each delivery mode and each execution policy. Afterwards every replica satisfies pgbench's own
 * invariant (the balances of accounts, tellers and branches and the history's deltas all add up, and
 * the history holds one row per acknowledged transaction) and the replicas are identical. The blocks
 * commit by certification (no cluster lock), decided alike everywhere, and travel as the write sets their
 * origins decoded at PREPARE ({@code blocks.write_sets: on} for symmetric execution).
 *
 * <p>The runs use {@code -n}: pgbench's vacuum step truncates pgbench_history, so runs started at
 * different sites would wipe each other's history (as on a single PostgreSQL server).
 */
class PgbenchEverySiteTest {
    static Stream<Arguments> configurations() {
        List<Arguments> out = new ArrayList<>();
        for (String execution : List.of("symmetric", "primary-copy", "local-copy"))
            for (String delivery : List.of("agreed", "safe", "opt-safe")) out.add(Arguments.of(delivery, execution));
        return out.stream();
    }

    private static final String ONE_REQUEST = String.join("\n",
            "\\set aid random(1, 100000 * :scale)",
            "\\set bid random(1, 1 * :scale)",
            "\\set tid random(1, 10 * :scale)",
            "\\set delta random(-5000, 5000)",
            "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid \\;",
            "SELECT abalance FROM pgbench_accounts WHERE aid = :aid \\;",
            "UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid \\;",
            "UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid \\;",
            "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);", "");

    @ParameterizedTest(name = "{0} delivery, {1} execution")
    @MethodSource("configurations")
    void tpcbLikeFromEverySiteKeepsTheInvariantAndIdenticalReplicas(String delivery, String execution) throws Exception {
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of("delivery", delivery, "execution", execution, "blocks", "certify", "blocks.write_sets", "on"))) {
            boolean writeSets = !execution.equals("symmetric");
            // a write set needs a key on every written table: under write-set policies the keys come before the
            // data, and pgbench_history (no key) gets REPLICA IDENTITY FULL, as the hint of the refusal says
            ClientTools.Result init = writeSets ? ClientTools.pgbench(c.proxyPort(0), "-i", "-I", "dtpg", "-s", "1", "-q")
                    : ClientTools.pgbench(c.proxyPort(0), "-i", "-s", "1", "-q");
            assertThat(init.exit()).as(init.output()).isZero();
            if (writeSets) {
                ClientTools.Result alter = ClientTools.psql(c.proxyPort(0), "ALTER TABLE pgbench_history REPLICA IDENTITY FULL;");
                assertThat(alter.output()).doesNotContain("ERROR");
            }
            Path script = Files.createTempFile("tpcb-one-request", ".sql");
            script.toFile().deleteOnExit();
            Files.writeString(script, ONE_REQUEST);
            long processed = 0;
            for (List<String> form : List.of(List.of("-b", "tpcb-like"), List.of("-f", script.toString()))) {
                ClientTools.Result[] rs = new ClientTools.Result[3];
                Thread[] ts = new Thread[3];
                for (int i = 0; i < 3; i++) {
                    int k = i;
                    List<String> args = new ArrayList<>(List.of("-n", "-c", "2", "-T", "2", "--max-tries", "1000"));
                    args.addAll(form);
                    ts[i] = Thread.ofPlatform().start(() -> {
                        try {
                            rs[k] = ClientTools.pgbench(c.proxyPort(k), args.toArray(String[]::new));
                        } catch (Exception e) {
                            throw new RuntimeException(e);
                        }
                    });
                }
                for (Thread t : ts) t.join();
                for (ClientTools.Result r : rs) {
                    assertThat(r.exit()).as(r.output()).isZero();
                    processed += ClientTools.processed(r);
                }
            }
            assertThat(processed).isPositive();
            assertThat(c.check().values()).as("replicas compared").containsOnly("same");
            {
                // the interactive blocks committed by certification, without a cluster lock, and every site decided alike
                List<List<Long>> cert = new ArrayList<>();
                long applied = 0, replayed = 0;
                for (int i = 0; i < 3; i++)
                    try (Connection x = java.sql.DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + c.proxyPort(i) + "/postgres", "postgres", "");
                         Statement st = x.createStatement(); ResultSet r = st.executeQuery("SHOW wanrep.certification")) {
                        r.next();
                        cert.add(List.of(r.getLong("certified_commits"), r.getLong("certification_aborts")));
                        applied += r.getLong("write_sets_applied");
                        replayed += r.getLong("logs_replayed");
                    }
                assertThat(cert.get(0).get(0)).as("blocks certified").isPositive();
                assertThat(cert).as("certified and aborted blocks at each site").containsOnly(cert.get(0));
                // each block's write set, captured at its origin's PREPARE, travelled in its CERTIFY (under symmetric
                // execution the first blocks after the start may replay their log while the capture starts)
                assertThat(applied).as("certified blocks applied from their write set").isPositive();
                if (writeSets) assertThat(replayed).as("certified blocks replayed under a write-set policy").isZero();
            }
            c.assertPgbenchInvariant(processed);
        }
    }
}
