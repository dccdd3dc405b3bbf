package org.wanrep.frontend;


import org.wanrep.txn.ReorderingListener;
import org.junit.jupiter.api.Test;
import org.wanrep.gcs.wan.LatencyMatrix;

import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Sequences under symmetric execution with opt-safe delivery, optimistic order forced out of the
 * final order: a tentative run that is revoked and rerun has advanced the sequence at that site
 * (nextval is not transactional), which no other site did. The replicas must still agree.
 */
class SymmetricSequenceTest {
    // Fails today (seed-independent in practice: 3 of 3 sites differed on the first run): a revoked or
    // transiently refused attempt is rolled back and rerun at one site, and its nextval calls are not
    // undone, so that site hands out other ids than the others. Needs the written sequences' values
    // saved before an attempt and set back after its rollback (executor/engine), not done here.

    @Test
    void serialIdsAgreeAfterRevokedTentativeRuns() throws Exception {
        List<String> sites = LatencyMatrix.load("na4").first(3).sites();
        long seed = Long.getLong("wanrep.wan.seed", new Random().nextLong());
        System.out.println("symmetric opt-safe sequences: seed " + seed);
        List<ReorderingListener> wrappers = new CopyOnWriteArrayList<>();
        try (TestCluster c = new TestCluster(sites, "na4", Map.of("delivery", "opt-safe", "execution", "symmetric"), l -> {
            ReorderingListener w = new ReorderingListener(l, seed + wrappers.size());
            wrappers.add(w);
            return w;
        })) {
            try (Connection conn = c.connect(0); Statement st = conn.createStatement()) {
                st.execute("CREATE TABLE seqd(id serial PRIMARY KEY, site int)");
                // an identity column outside any key: the insert locks no row, only its sequence makes two of them conflict
                st.execute("CREATE TABLE idlog(n int GENERATED ALWAYS AS IDENTITY, site int)");
                // a cached sequence hands a backend 20 values at a time: which backend runs an insert differs by site
                st.execute("CREATE SEQUENCE cached CACHE 20");
                st.execute("CREATE TABLE cachedt(id bigint DEFAULT nextval('cached') PRIMARY KEY, site int)");
            }
            c.awaitQuiescent();
            List<Throwable> failures = new CopyOnWriteArrayList<>();
            List<Thread> ts = new ArrayList<>();
            for (int s = 0; s < 3; s++) {
                int site = s;
                ts.add(Thread.ofPlatform().start(() -> {
                    try (Connection conn = c.connect(site); Statement st = conn.createStatement()) {
                        for (int k = 0; k < 15; k++) {
                            st.execute("INSERT INTO seqd(site) VALUES (" + site + ")");
                            st.execute("INSERT INTO idlog(site) VALUES (" + site + ")");
                            st.execute("INSERT INTO cachedt(site) VALUES (" + site + ")");
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            for (Thread t : ts) t.join();
            assertThat(failures).isEmpty();
            // a block on a backend that has values cached from its own autocommit insert: elsewhere its log replays
            // on a backend with none cached
            try (Connection conn = c.connect(0); Statement st = conn.createStatement()) {
                st.execute("INSERT INTO cachedt(site) VALUES (10)");
                conn.setAutoCommit(false);
                st.execute("INSERT INTO cachedt(site) VALUES (11)");
                conn.commit();
            }
            Map<String, String> verdict = c.check();
            System.out.println("reordered " + wrappers.stream().mapToInt(w -> w.reordered).sum() + "; " + verdict);
            assertThat(verdict).allSatisfy((t, v) -> assertThat(v).as(t).isEqualTo("same"));
        }
    }
}
