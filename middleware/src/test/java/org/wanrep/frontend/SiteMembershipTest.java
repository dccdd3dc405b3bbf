package org.wanrep.frontend;

import org.junit.jupiter.api.Test;
import org.wanrep.site.Site;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Membership changes on a running cluster (one cluster, in order): a fourth site is added under load, starts
 * empty, takes a state transfer, catches up and serves, and every replica ends identical with every
 * acknowledged commit; then two sites are removed (4 -> 3 -> 2), the second the sequencer's site a under inserts at
 * the others: each removed site stops by itself when it delivers its removal, the others go on (after a, with another
 * sequencer) with every acknowledged insert, and with 2 sites left one crash leaves no primary component.
 */
class SiteMembershipTest {
    /** Why the site stopped by itself, waiting at most 30 s (a site that does not stop fails the test, not hangs it). */
    private static String stopReason(Site s) throws Exception {
        return java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return s.awaitStopped();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }).get(30, java.util.concurrent.TimeUnit.SECONDS);
    }

    /** Inserts at site i until {@code stop}, each acknowledged id into {@code acked}; a failed one (outcome unknown) is not. */
    private static Thread writer(TestCluster c, int i, String prefix, Set<String> acked, AtomicBoolean stop) {
        return Thread.ofPlatform().start(() -> {
            int n = 0;
            while (!stop.get()) {
                try (Connection x = c.connect(i); Statement st = x.createStatement()) {
                    while (!stop.get()) {
                        String id = prefix + n++;
                        st.execute("INSERT INTO h (id) VALUES ('" + id + "')");
                        acked.add(id);
                    }
                } catch (SQLException e) {
                    try { Thread.sleep(100); } catch (InterruptedException x) { return; }
                }
            }
        });
    }

    @Test
    void addASiteUnderLoadThenRemoveTwo() throws Exception {
        Path logs = Files.createTempDirectory("wanrep-membership");
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of("delivery", "safe", "rejoin.log_dir", logs.toString()))) {
            try (Connection a = c.connect(0); Statement st = a.createStatement()) {
                st.execute("CREATE TABLE h (id text PRIMARY KEY, n serial)");
                for (int i = 0; i < 20; i++) st.execute("INSERT INTO h (id) VALUES ('before-" + i + "')");
            }
            Set<String> acked = ConcurrentHashMap.newKeySet();
            for (int i = 0; i < 20; i++) acked.add("before-" + i);
            AtomicBoolean stop = new AtomicBoolean();
            Thread writer = writer(c, 1, "during-", acked, stop);
            Thread.sleep(300);
            // only the replica's own user may change the membership
            assertThat(c.show(0, "SHOW wanrep.sites add d")).isEqualTo("a,b,c,d");
            for (int i = 0; i < 3; i++) assertThat(c.site(i).gcs().sites()).containsExactly("a", "b", "c", "d");
            // b writes its file on its delivery thread, maybe just after a answered
            for (long until = System.nanoTime() + 10_000_000_000L; System.nanoTime() < until; Thread.sleep(50))
                if (Files.exists(logs.resolve("b.sites")) && Files.readString(logs.resolve("b.sites")).endsWith("\ta,b,c,d\n")) break;
            assertThat(Files.readString(logs.resolve("b.sites"))).endsWith("\ta,b,c,d\n");
            int ackedBefore = acked.size();
            Site d = c.addSite("d");
            assertThat(c.awaitServing(3, ackedBefore, "57P03", "08006", "57P01", "3D000", "42P01").served()).as("site d serves").isTrue();
            assertThat(d.engine().lastTransfer()).as("the new site got a copy of another site's replica").isNotNull();
            assertThat(d.gcs().view().members()).hasSize(4);
            try (Connection x = c.connect(3); Statement st = x.createStatement()) {
                st.execute("INSERT INTO h (id) VALUES ('at-d')");
                acked.add("at-d");
            }
            Thread.sleep(300);
            stop.set(true);
            writer.join();
            assertThat(c.check().values()).containsOnly("same");
            for (int i = 0; i < 4; i++) {
                try (Connection x = c.pgs.get(i).connect(); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SELECT id FROM h")) {
                    Set<String> present = new HashSet<>();
                    while (rs.next()) present.add(rs.getString(1));
                    assertThat(present).as("replica %s", c.sites.get(i)).containsAll(acked);
                }
            }

            // 4 -> 3: c stops by itself when it delivers its removal; the others go on
            assertThat(c.show(0, "SHOW wanrep.sites remove c")).isEqualTo("a,b,d");
            Site sc = c.site(2);
            assertThat(stopReason(sc)).contains("removed from the cluster");
            assertThat(sc.removed()).isTrue();
            c.stopped(2);
            try (Connection x = c.connect(3); Statement st = x.createStatement()) {
                st.execute("INSERT INTO h (id) VALUES ('after-c')");
            }
            // a site already configured is no change
            try (Connection x = c.connect(1, "preferQueryMode=simple"); Statement st = x.createStatement()) {
                assertThatThrownBy(() -> st.executeQuery("SHOW wanrep.sites add b")).hasMessageContaining("already");
            }
            // 3 -> 2: a, the sequencer's site (the first, named by the default), removed under inserts at b and d. It
            // orders until it leaves; then b and d name the view's first member (no member of a listed site is left)
            stop.set(false);
            Set<String> ackedLate = ConcurrentHashMap.newKeySet();
            List<Thread> writers = List.of(writer(c, 1, "late-b-", ackedLate, stop), writer(c, 3, "late-d-", ackedLate, stop));
            Thread.sleep(300);
            assertThat(c.site(0).gcs().view().sequencer()).startsWith("a/");
            assertThat(c.show(1, "SHOW wanrep.sites remove a")).isEqualTo("b,d");
            Site sa = c.site(0);
            assertThat(stopReason(sa)).contains("removed from the cluster");
            c.stopped(0);
            // b and d install the view without a at slightly different moments: wait for both
            for (long until = System.nanoTime() + 30_000_000_000L; System.nanoTime() < until; Thread.sleep(20))
                if (java.util.stream.Stream.of(c.site(1), c.site(3)).allMatch(x -> x.gcs().view() != null && x.gcs().view().primary()
                        && x.gcs().view().members().size() == 2)) break;
            String seq = c.site(1).gcs().view().sequencer();
            assertThat(seq).as("the sequencer once a is gone").isIn(c.site(1).gcs().view().members()).doesNotStartWith("a/");
            assertThat(c.site(3).gcs().view().sequencer()).isEqualTo(seq);
            int ackedAtRemoval = ackedLate.size();
            // the remaining sites keep acknowledging with the new sequencer
            for (long until = System.nanoTime() + 30_000_000_000L; System.nanoTime() < until && ackedLate.size() < ackedAtRemoval + 20; ) Thread.sleep(20);
            stop.set(true);
            for (Thread w : writers) w.join();
            assertThat(ackedLate.size()).as("acknowledged after a left").isGreaterThanOrEqualTo(ackedAtRemoval + 20);
            try (Connection x = c.connect(3); Statement st = x.createStatement()) {
                st.execute("INSERT INTO h (id) VALUES ('two-left')");
            }
            assertThat(c.check(List.of(1, 3)).values()).containsOnly("same");
            for (int i : List.of(1, 3)) {
                try (Connection x = c.pgs.get(i).connect(); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SELECT id FROM h")) {
                    Set<String> present = new HashSet<>();
                    while (rs.next()) present.add(rs.getString(1));
                    assertThat(present).as("replica %s", c.sites.get(i)).containsAll(acked).containsAll(ackedLate).contains("two-left");
                }
            }
            assertThat(Files.readString(logs.resolve("d.sites"))).endsWith("\tb,d\n");
            c.crash(1);
            long until = System.nanoTime() + 30_000_000_000L;
            while (c.site(3).gcs().isPrimary() && System.nanoTime() < until) Thread.sleep(20);
            assertThat(c.site(3).gcs().isPrimary()).as("d alone is 1 of 2 configured sites").isFalse();
            assertThatThrownBy(() -> {
                try (Connection x = c.connect(3); Statement st = x.createStatement()) {
                    st.execute("INSERT INTO h (id) VALUES ('alone')");
                }
            }).isInstanceOf(SQLException.class);
        }
    }
}
