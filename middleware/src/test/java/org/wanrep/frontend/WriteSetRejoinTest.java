package org.wanrep.frontend;

import org.junit.jupiter.api.Test;
import org.wanrep.site.Site;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Under a write-set policy (primary-copy, safe delivery) a site whose middleware crashed mid-load and is started
 * again while the others go on comes back by itself: it cannot replay write sets, so it takes a copy of a serving
 * site's replica at exactly its view's first GSN - 1 (prepared by the donor when it installed that view), with its
 * capture slots dropped before the restore and created again after it; it answers 57P03 until then, never from its
 * stale replica, then serves, and every replica ends identical with every acknowledged commit. First a site that
 * executes nothing (b), then the primary of the configured tables (c), which the others wait for from its view's first
 * GSN on. Then membership under the write-set policy: a fourth site d is added under load, transfers the same way, and
 * becomes the primary of table x (spread by hash: a's among three sites, d's among four, switched at the change's GSN
 * everywhere); then it is removed again and x goes back to a.
 */
class WriteSetRejoinTest {
    @Test
    void aCrashedWriteSetSiteStartedAgainTransfersStateUnderLoad() throws Exception {
        long seed = Long.getLong("wanrep.rejoin.seed", System.nanoTime());
        System.out.println("WriteSetRejoinTest seed " + seed);
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of("delivery", "safe", "execution", "primary-copy",
                "tables.public.t.primary", "c", "tables.public.h.primary", "c"))) {
            try (Connection a = c.connect(0); Statement st = a.createStatement()) {
                st.execute("CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL)");
                st.execute("INSERT INTO t SELECT g, 0 FROM generate_series(1, 10) g");
                st.execute("CREATE TABLE h (id text PRIMARY KEY)");
                st.execute("CREATE TABLE x (id text PRIMARY KEY)");
            }
            Set<String> acked = ConcurrentHashMap.newKeySet();
            crashAndRestartUnderLoad(c, 1, acked, seed);       // b: executes nothing (c is every table's primary)
            crashAndRestartUnderLoad(c, 2, acked, seed + 1);   // c: the executor
            addAndRemoveUnderLoad(c, acked);
            c.awaitQuiescent();
            assertThat(c.check(List.of(0, 1, 2)).values()).containsOnly("same");
            for (int i = 0; i < 3; i++) {
                try (Connection x = c.pgs.get(i).connect(); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SELECT id FROM h")) {
                    Set<String> present = new java.util.HashSet<>();
                    while (rs.next()) present.add(rs.getString(1));
                    assertThat(present).as("replica %s holds every acknowledged commit", c.sites.get(i)).containsAll(acked);
                }
                try (Connection x = c.pgs.get(i).connect(); Statement st = x.createStatement();
                     ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'wanrep\\_" + c.sites.get(i) + "\\_%'")) {
                    rs.next();
                    assertThat(rs.getInt(1)).as("capture slots at %s", c.sites.get(i)).isPositive();
                }
            }
            assertThat(acked.size()).isGreaterThan(50);
        }
    }

    private static void addAndRemoveUnderLoad(TestCluster c, Set<String> acked) throws Exception {
        for (int i = 0; i < 3; i++) assertThat(c.site(i).engine().policy().primaryOf("public.x")).isEqualTo("a");
        AtomicBoolean stop = new AtomicBoolean();
        Thread writer = memberWriter(c, acked, stop, "added-");
        Thread.sleep(500);
        assertThat(c.show(0, "SHOW wanrep.sites add d")).isEqualTo("a,b,c,d");
        for (int i = 0; i < 3; i++) assertThat(c.site(i).engine().policy().primaryOf("public.x")).as("x's primary at %s", c.sites.get(i)).isEqualTo("d");
        int before = acked.size();
        Site d = c.addSite("d");
        assertThat(c.awaitServing(3, before, "57P03", "08006", "57P01", "3D000", "42P01").served()).as("site d serves").isTrue();
        assertThat(d.engine().lastTransfer()).as("the new site got a copy of another site's replica").isNotNull();
        assertThat(d.engine().policy().primaryOf("public.x")).isEqualTo("d");
        try (Connection x = c.connect(3); Statement st = x.createStatement()) {
            st.execute("INSERT INTO x VALUES ('at-d')");
            st.execute("INSERT INTO h VALUES ('at-d')");
            acked.add("at-d");
        }
        Thread.sleep(500);
        stop.set(true);
        writer.join();
        c.awaitQuiescent();
        assertThat(c.check().values()).as("four replicas").containsOnly("same");
        AtomicBoolean stop2 = new AtomicBoolean();
        Thread writer2 = memberWriter(c, acked, stop2, "removed-");
        Thread.sleep(500);
        // removed again: d stops by itself at its removal, x goes back to a, the others go on
        assertThat(c.show(0, "SHOW wanrep.sites remove d")).isEqualTo("a,b,c");
        String reason = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return d.awaitStopped();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }).get(30, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(reason).contains("removed from the cluster");
        c.stopped(3);
        for (int i = 0; i < 3; i++) assertThat(c.site(i).engine().policy().primaryOf("public.x")).isEqualTo("a");
        Thread.sleep(500);
        stop2.set(true);
        writer2.join();
        try (Connection x = c.pgs.get(0).connect(); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SELECT id FROM x")) {
            Set<String> present = new java.util.HashSet<>();
            while (rs.next()) present.add(rs.getString(1));
            assertThat(present).as("x at a").contains("at-d");
        }
    }

    /** Inserts at b into x (executed by x's primary) and h (by c), one autocommit request each. */
    private static Thread memberWriter(TestCluster c, Set<String> acked, AtomicBoolean stop, String prefix) {
        return Thread.ofPlatform().start(() -> {
            int n = 0;
            while (!stop.get()) {
                try (Connection x = c.connect(1); Statement st = x.createStatement()) {
                    while (!stop.get()) {
                        String id = prefix + n++;
                        st.execute("INSERT INTO x VALUES ('" + id + "')");
                        st.execute("INSERT INTO h VALUES ('" + id + "')");
                        acked.add(id);
                    }
                } catch (SQLException e) {
                    try { Thread.sleep(100); } catch (InterruptedException x) { return; }
                }
            }
        });
    }

    /** Conflicting updates from every running site; site {@code k} crashes mid-load and starts again while the others go on. */
    private static void crashAndRestartUnderLoad(TestCluster c, int k, Set<String> acked, long seed) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> writers = c.conflictingWriters(3, seed, acked, stop);
        Thread.sleep(1000);
        c.crash(k);
        Thread.sleep(2000);   // the others exclude it and go on
        int before = acked.size();
        assertThat(before).isGreaterThan(0);
        Site s = c.restart(k);   // a write-set site back in the primary component takes a copy (it used to stop)
        TestCluster.Serving served = c.awaitServing(k, before, "57P03", "08006", "57P01", "3D000");
        int refused = served.refused();
        assertThat(served.served()).as("site %s serves again after the state transfer", c.sites.get(k)).isTrue();
        assertThat(s.engine().failure()).isNull();
        assertThat(s.engine().lastTransfer()).as("site %s took a copy of another site's replica", c.sites.get(k)).isNotNull();
        System.out.println("site " + c.sites.get(k) + ": state transfer " + s.engine().lastTransfer() + ", refused " + refused + " requests meanwhile");
        Thread.sleep(500);   // it takes part in the load again (its own clients' updates, and as c every table's executor)
        stop.set(true);
        for (Thread w : writers) w.join();
    }
}
