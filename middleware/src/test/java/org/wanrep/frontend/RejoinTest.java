package org.wanrep.frontend;

import org.junit.jupiter.api.Test;
import org.wanrep.site.Site;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A site whose middleware crashed mid-load (in process: its member, proxy and engine vanish, its replica's
 * open transactions abort) and that is started again while the others go on catches up from their logs by
 * itself: it never answers from its stale replica, then serves, and every replica ends identical with every
 * acknowledged commit. Its own site, then the sequencer's, in one cluster.
 */
class RejoinTest {
    @Test
    void aCrashedSiteStartedAgainCatchesUpUnderLoad() throws Exception {
        long seed = Long.getLong("wanrep.rejoin.seed", System.nanoTime());
        System.out.println("RejoinTest seed " + seed);
        // replay_per_second 0: this test is about the replay from the logs (StateTransferTest covers the copy)
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of("delivery", "safe", "rejoin.replay_per_second", "0"))) {
            try (Connection a = c.connect(0); Statement st = a.createStatement()) {
                st.execute("CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL)");
                st.execute("INSERT INTO t SELECT g, 0 FROM generate_series(1, 10) g");
                st.execute("CREATE TABLE h (id text PRIMARY KEY)");
            }
            Set<String> acked = ConcurrentHashMap.newKeySet();
            crashAndRestartUnderLoad(c, 2, acked, seed);       // c
            crashAndRestartUnderLoad(c, 0, acked, seed + 1);   // a: its member orders
            c.awaitQuiescent();
            assertThat(c.check().values()).containsOnly("same");
            for (int i = 0; i < 3; i++) {
                try (Connection x = c.pgs.get(i).connect(); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SELECT id FROM h")) {
                    Set<String> present = new java.util.HashSet<>();
                    while (rs.next()) present.add(rs.getString(1));
                    assertThat(present).as("replica %s holds every acknowledged commit", c.sites.get(i)).containsAll(acked);
                }
            }
            assertThat(acked.size()).isGreaterThan(50);
        }
    }

    /** Conflicting updates from every running site; site {@code k} crashes mid-load and starts again while the others go on. */
    private static void crashAndRestartUnderLoad(TestCluster c, int k, Set<String> acked, long seed) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> writers = c.conflictingWriters(3, seed, acked, stop);
        Thread.sleep(1500);
        c.crash(k);
        Thread.sleep(3000);   // the others exclude it and go on
        int before = acked.size();
        assertThat(before).isGreaterThan(0);
        Site s = c.restart(k);   // everything acknowledged before this has a GSN below its first one: none may be missing
        // from its start: it answers 57P03 until caught up, and once it answers it has every commit acknowledged before
        TestCluster.Serving served = c.awaitServing(k, before, "57P03");
        int refused = served.refused();
        assertThat(served.served()).as("site %s serves again after catching up", c.sites.get(k)).isTrue();
        assertThat(s.engine().failure()).isNull();
        assertThat(s.engine().lastCatchUp()).as("site %s caught up from the others' logs", c.sites.get(k)).isNotNull();
        assertThat(s.engine().lastCatchUp().gsns()).isPositive();
        System.out.println("site " + c.sites.get(k) + ": caught up " + s.engine().lastCatchUp() + ", refused " + refused + " requests meanwhile");
        Thread.sleep(1000);   // it takes part in the load again
        stop.set(true);
        for (Thread w : writers) w.join();
    }
}
