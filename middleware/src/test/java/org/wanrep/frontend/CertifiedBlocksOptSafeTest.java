package org.wanrep.frontend;

import org.junit.jupiter.api.Test;
import org.wanrep.txn.ReorderingListener;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Certified blocks under opt-safe delivery, with optimistic deliveries forced out of the final order
 * ({@link ReorderingListener}, seeded: {@code -Dwanrep.optsafe.seed=S}, printed): pgbench's tpcb-like as interactive
 * blocks and as one request, from every site at once, so that certified blocks revoke tentative attempts of
 * conflicting updates (whose cancel must hold, or they wait on the blocks' prepared row locks while the blocks wait
 * for their rollback) and updates reordered behind them. Afterwards: every run ended (no hang), pgbench's invariant
 * at every replica, identical replicas, blocks certified and decided alike at every site, nothing left prepared.
 */
class CertifiedBlocksOptSafeTest {
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

    @Test
    void certifiedBlocksAndReorderedUpdatesFromEverySite() throws Exception {
        long seed = Long.getLong("wanrep.optsafe.seed", new Random().nextLong());
        System.out.println("certified blocks under opt-safe: seed " + seed);
        List<ReorderingListener> wrappers = new CopyOnWriteArrayList<>();
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of("delivery", "opt-safe", "blocks", "certify"), l -> {
            ReorderingListener w = new ReorderingListener(l, seed + wrappers.size());
            wrappers.add(w);
            return w;
        })) {
            ClientTools.Result init = ClientTools.pgbench(c.proxyPort(0), "-i", "-s", "1", "-q");
            assertThat(init.exit()).as(init.output()).isZero();
            Path script = Files.createTempFile("tpcb-one-request", ".sql");
            script.toFile().deleteOnExit();
            Files.writeString(script, ONE_REQUEST);
            // at every site at once: one client sending blocks, one sending the same transaction as one request
            List<List<String>> runs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                runs.add(List.of(Integer.toString(i), "-b", "tpcb-like"));
                runs.add(List.of(Integer.toString(i), "-f", script.toString()));
            }
            ClientTools.Result[] rs = new ClientTools.Result[runs.size()];
            Thread[] ts = new Thread[runs.size()];
            for (int k = 0; k < runs.size(); k++) {
                int n = k;
                List<String> args = new ArrayList<>(List.of("-n", "-c", "1", "-T", "5", "--max-tries", "1000"));
                args.addAll(runs.get(k).subList(1, 3));
                int port = c.proxyPort(Integer.parseInt(runs.get(k).get(0)));
                ts[k] = Thread.ofPlatform().start(() -> {
                    try {
                        rs[n] = ClientTools.pgbench(port, args.toArray(String[]::new));
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                });
            }
            for (Thread t : ts) {
                t.join(120_000);
                assertThat(t.isAlive()).as("a pgbench run still waiting after 2 minutes (seed " + seed + ")").isFalse();
            }
            long processed = 0;
            for (ClientTools.Result r : rs) {
                assertThat(r.exit()).as(r.output()).isZero();
                processed += ClientTools.processed(r);
            }
            assertThat(processed).isPositive();
            assertThat(wrappers.stream().mapToInt(w -> w.reordered).sum()).as("optimistic deliveries reordered").isPositive();
            assertThat(c.check().values()).as("replicas compared (seed " + seed + ")").containsOnly("same");
            List<List<Long>> cert = new ArrayList<>();
            for (int i = 0; i < 3; i++)
                try (Connection x = c.connect(i); Statement st = x.createStatement(); ResultSet r = st.executeQuery("SHOW wanrep.certification")) {
                    r.next();
                    cert.add(List.of(r.getLong("certified_commits"), r.getLong("certification_aborts")));
                }
            assertThat(cert.get(0).get(0)).as("blocks certified").isPositive();
            assertThat(cert).as("certified and aborted blocks at each site").containsOnly(cert.get(0));
            c.assertPgbenchInvariant(processed);
            for (int i = 0; i < 3; i++) {
                try (Connection x = c.pgs.get(i).connect(); Statement st = x.createStatement();
                     ResultSet r = st.executeQuery("SELECT count(*) FROM pg_prepared_xacts")) {
                    r.next();
                    assertThat(r.getLong(1)).as("prepared transactions left at replica " + i).isZero();
                }
            }
        }
    }
}
