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
 * A site that missed more than the others' logs hold (a tiny {@code rejoin.log_window}) gets a copy of a
 * serving site's replica at a known GSN (pg_dump of exported snapshots, restored in place of its own),
 * then catches up from the logs, while the others keep serving under load; all replicas end identical
 * with every acknowledged commit.
 */
class StateTransferTest {
    @Test
    void aSiteBeyondTheLogWindowTransfersStateUnderLoad() throws Exception {
        java.nio.file.Path logs = java.nio.file.Files.createTempDirectory("wanrep-state-transfer-test");
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of("delivery", "safe", "rejoin.log_window", "20",
                "rejoin.log_dir", logs.toString()))) {
            try (Connection a = c.connect(0, "preferQueryMode=simple"); Statement st = a.createStatement()) {   // CREATE DATABASE as a simple Query
                st.execute("CREATE TABLE h (id text PRIMARY KEY, n serial)");
                st.execute("CREATE DATABASE other TEMPLATE template0");   // without wanrep's table: created when first needed
            }
            java.util.Properties up = new java.util.Properties();
            up.setProperty("user", "postgres");
            try (Connection o = java.sql.DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + c.proxyPort(0) + "/other", up);
                 Statement st = o.createStatement()) {
                st.execute("CREATE TABLE o (id int PRIMARY KEY)");
                st.execute("INSERT INTO o VALUES (1), (2)");
            }
            Set<String> acked = ConcurrentHashMap.newKeySet();
            c.crash(2);
            try (Connection a = c.connect(0); Statement st = a.createStatement()) {
                for (int i = 0; i < 60; i++) {
                    st.execute("INSERT INTO h (id) VALUES ('before-" + i + "')");
                    acked.add("before-" + i);
                }
                st.execute("CREATE TABLE h2 (id int PRIMARY KEY)");   // DDL while c is away
            }
            AtomicBoolean stop = new AtomicBoolean();
            Thread writer = Thread.ofPlatform().start(() -> {
                int n = 0;
                while (!stop.get()) {
                    try (Connection x = c.connect(1); Statement st = x.createStatement()) {
                        while (!stop.get()) {
                            String id = "during-" + n++;
                            st.execute("INSERT INTO h (id) VALUES ('" + id + "')");
                            acked.add(id);
                        }
                    } catch (SQLException e) {
                        try { Thread.sleep(100); } catch (InterruptedException x) { return; }
                    }
                }
            });
            Thread.sleep(500);
            int ackedBefore = acked.size();   // ordered before c is back: it must have them all before it answers
            Site s = c.restart(2);
            // not serving yet; or its backend went with the database the transfer replaced
            boolean served = c.awaitServing(2, ackedBefore, "57P03", "08006", "57P01", "3D000").served();
            if (!served) printSessions(c, 2);
            assertThat(served).as("site c serves again: " + s.engine().describe()).isTrue();
            assertThat(s.engine().lastTransfer()).as("site c got a copy of another site's replica").isNotNull();
            System.out.println("state transfer: " + s.engine().lastTransfer() + ", then catch-up " + s.engine().lastCatchUp());
            // c's classifier read its catalog before the transfer (the reads refused above were classified first):
            // h2 came with the transfer, and a read of it is a read here, not an update ordered at every site
            try (Connection x = c.connect(2); Statement st = x.createStatement()) {
                long ordered = orderedHere(st);
                try (ResultSet rs = st.executeQuery("SELECT count(*) FROM h2")) {
                    rs.next();
                }
                assertThat(orderedHere(st)).as("a read of a table the transfer brought was ordered as an update").isEqualTo(ordered);
            }
            try (Connection x = c.connect(2); Statement st = x.createStatement()) {
                st.execute("INSERT INTO h (id) VALUES ('after')");   // c takes part again
                acked.add("after");
            }
            Thread.sleep(500);
            stop.set(true);
            writer.join();
            Map<String, String> verdicts = c.check();
            if (!verdicts.values().stream().allMatch("same"::equals)) {
                System.out.println("DEBUG verdicts " + verdicts);
                for (int i : new int[]{0, 2})
                    try (Connection x = c.pgs.get(i).connect(); Statement st = x.createStatement();
                         ResultSet rs = st.executeQuery("SELECT string_agg(id || ':' || n, ' ' ORDER BY n) FROM h WHERE n > 100")) {
                        rs.next();
                        System.out.println("DEBUG " + i + " " + rs.getString(1));
                    }
            }
            assertThat(verdicts.values()).containsOnly("same");
            for (int i = 0; i < 3; i++) {
                try (Connection x = c.pgs.get(i).connect(); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SELECT id FROM h")) {
                    Set<String> present = new java.util.HashSet<>();
                    while (rs.next()) present.add(rs.getString(1));
                    assertThat(present).as("replica %s", c.sites.get(i)).containsAll(acked);
                }
                try (Connection x = c.pgs.get(i).connect("other"); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM o")) {
                    rs.next();
                    assertThat(rs.getInt(1)).as("database other at %s", c.sites.get(i)).isEqualTo(2);
                }
            }
            // c needs a transfer again and its donor a (first in configured order, the sequencer's site) crashes
            // while c's pg_dump copies database postgres (the last; ~10 MB): first a's middleware alone, whose
            // snapshot the dump had already imported, so the copy is complete and kept; then, with a back,
            // the whole of site a, so c must take the transfer from b
            donorCrashesMidDump(c, acked, false);
            c.restart(0);   // back by catch-up or a transfer of its own, depending on how much it missed
            awaitServing(c, 0);

            // c dies while replacing its databases (as if between two pg_restores): its mark is written, database
            // other is gone, and the position rows restored so far claim every GSN. Started again, it must not
            // trust them: a state transfer, database other back, the mark gone.
            c.crash(2);
            java.nio.file.Path mark = logs.resolve("c.transfer");
            java.nio.file.Files.writeString(mark, "replacing the databases by a state transfer\n");
            try (Connection x = c.pgs.get(2).connect(); Statement st = x.createStatement()) {
                st.execute("DROP DATABASE other WITH (FORCE)");
            }
            Site s3 = c.restart(2);
            awaitServing(c, 2);
            assertThat(s3.engine().lastTransfer()).as("a half-restored replica is replaced").isNotNull();
            assertThat(mark).doesNotExist();
            try (Connection x = c.pgs.get(2).connect("other"); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM o")) {
                rs.next();
                assertThat(rs.getInt(1)).as("database other at c").isEqualTo(2);
            }
            assertThat(c.check().values()).containsOnly("same");

            donorCrashesMidDump(c, acked, true);
        }
    }

    /**
     * Crashes site c, writes beyond the log window, starts c again, and crashes its donor a while c's pg_dump
     * of database postgres runs there ({@code wholeSite}: PostgreSQL, immediate shutdown, then the middleware;
     * else the middleware only). c must serve again, never answering from a stale replica, and b and c (a
     * primary: 2 of 3) end identical with every acknowledged commit.
     */
    private static void donorCrashesMidDump(TestCluster c, Set<String> acked, boolean wholeSite) throws Exception {
        String round = wholeSite ? "site" : "mw";
        c.crash(2);
        try (Connection a = c.connect(0); Statement st = a.createStatement()) {
            if (!wholeSite) {   // ~10 MB, so that the dump takes long enough to be caught at it
                st.execute("CREATE TABLE big (id int PRIMARY KEY, pad text)");
                st.execute("INSERT INTO big SELECT g, repeat(md5(g::text), 8) FROM generate_series(1, 40000) g");
            }
            for (int i = 0; i < 30; i++) {   // beyond the log window of 20
                st.execute("INSERT INTO h (id) VALUES ('away-" + round + i + "')");
                acked.add("away-" + round + i);
            }
        }
        Site donor = c.site(0);
        org.wanrep.pg.LocalPostgres donorPg = c.pgs.get(0);
        java.util.concurrent.atomic.AtomicLong killedAt = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicReference<Throwable> killerFailed = new java.util.concurrent.atomic.AtomicReference<>();
        long exportsBefore = org.wanrep.exec.SnapshotExport.exports();
        // watches a's PostgreSQL for c's pg_dump of database postgres, then crashes a (PostgreSQL first: the dump breaks at once)
        Thread killer = Thread.ofPlatform().start(() -> {
            try {
                try (Connection x = donorPg.connect(); Statement st = x.createStatement()) {
                    long end = System.nanoTime() + 60_000_000_000L;
                    while (true) {
                        try (ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pg_dump'"
                                + " AND datname = 'postgres' AND state = 'active'")) {
                            rs.next();
                            if (rs.getInt(1) > 0) break;
                        }
                        if (System.nanoTime() > end) throw new AssertionError("no pg_dump seen at a within 60 s");
                        Thread.sleep(2);
                    }
                }
                if (wholeSite) donorPg.crash();
                donor.crash();
                killedAt.set(System.nanoTime());
            } catch (Throwable e) {
                killerFailed.set(e);
            }
        });
        AtomicBoolean stop = new AtomicBoolean();
        Thread writer = Thread.ofPlatform().start(() -> {   // load at b throughout
            int n = 0;
            while (!stop.get()) {
                try (Connection x = c.connect(1); Statement st = x.createStatement()) {
                    while (!stop.get()) {
                        String id = "donor-" + round + "-" + n++;
                        st.execute("INSERT INTO h (id) VALUES ('" + id + "')");
                        acked.add(id);
                        Thread.sleep(5);   // load, not a flood: the joiner's catch-up need not take long
                    }
                } catch (SQLException e) {
                    try { Thread.sleep(100); } catch (InterruptedException x) { return; }
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        Thread.sleep(300);
        int ackedBefore = acked.size();
        long started = System.nanoTime();
        Site s = c.restart(2);
        boolean served = c.awaitServing(2, ackedBefore, "57P03", "08006", "57P01", "3D000").served();
        killer.join(60_000);
        assertThat(killerFailed.get()).isNull();
        assertThat(killedAt.get()).as("a crashed").isNotZero();
        c.stopped(0);
        assertThat(served).as("site c serves again after its donor crashed: " + s.engine().describe()).isTrue();
        assertThat(s.engine().lastTransfer()).isNotNull();
        System.out.printf("donor %s crashed %d ms after c started; c served %d ms after its start; transfer %s%n", wholeSite ? "site" : "middleware",
                (killedAt.get() - started) / 1_000_000, (System.nanoTime() - started) / 1_000_000, s.engine().lastTransfer());
        if (!wholeSite)   // a's copy was complete: not thrown away and taken again from b
            assertThat(org.wanrep.exec.SnapshotExport.exports() - exportsBefore).as("snapshot exports for c's transfer").isEqualTo(1);
        try (Connection x = c.connect(2); Statement st = x.createStatement()) {
            st.execute("INSERT INTO h (id) VALUES ('after-donor-" + round + "')");
            acked.add("after-donor-" + round);
        }
        Thread.sleep(300);
        stop.set(true);
        writer.join();
        assertThat(c.check(List.of(1, 2)).values()).containsOnly("same");
        for (int i = 1; i < 3; i++) {
            try (Connection x = c.pgs.get(i).connect(); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SELECT id FROM h")) {
                Set<String> present = new java.util.HashSet<>();
                while (rs.next()) present.add(rs.getString(1));
                assertThat(present).as("replica %s", c.sites.get(i)).containsAll(acked);
            }
            try (Connection x = c.pgs.get(i).connect(); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM big")) {
                rs.next();
                assertThat(rs.getInt(1)).as("big at %s", c.sites.get(i)).isEqualTo(40_000);
            }
        }
    }

    /** What replica i's sessions are doing (for a site that does not serve again in time). */
    private static void printSessions(TestCluster c, int i) {
        try (Connection x = c.pgs.get(i).connect(); Statement st = x.createStatement();
             ResultSet rs = st.executeQuery("SELECT pid, datname, application_name, state, wait_event_type, wait_event, backend_xid,"
                     + " pg_blocking_pids(pid), now() - query_start, now() - xact_start, left(query, 400) FROM pg_stat_activity"
                     + " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")) {
            while (rs.next()) {
                StringBuilder b = new StringBuilder("DEBUG session");
                for (int k = 1; k <= 11; k++) b.append(" | ").append(rs.getString(k));
                try {
                    b.append(" | wchan ").append(java.nio.file.Files.readString(java.nio.file.Path.of("/proc/" + rs.getString(1) + "/wchan")))
                            .append(" | stat ").append(java.nio.file.Files.readString(java.nio.file.Path.of("/proc/" + rs.getString(1) + "/stat")).strip())
                            .append(" | stack ").append(java.nio.file.Files.readString(java.nio.file.Path.of("/proc/" + rs.getString(1) + "/stack")).replace('\n', ';'));
                } catch (Exception e) {
                    b.append(" | ").append(e);
                }
                System.out.println(b);
            }
            try (ResultSet l = x.createStatement().executeQuery("SELECT pid, locktype, relation::regclass, mode, granted FROM pg_locks WHERE NOT granted")) {
                while (l.next()) System.out.println("DEBUG lock waited " + l.getString(1) + " " + l.getString(2) + " " + l.getString(3) + " " + l.getString(4));
            }
        } catch (SQLException e) {
            System.out.println("DEBUG sessions: " + e);
        }
    }

    /** Waits (at most 60 s) until site i answers a query. */
    private static void awaitServing(TestCluster c, int i) throws Exception {
        long end = System.nanoTime() + 60_000_000_000L;
        while (true) {
            try (Connection x = c.connect(i); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM h")) {
                rs.next();
                return;
            } catch (SQLException e) {
                if (System.nanoTime() > end) throw e;
                Thread.sleep(50);
            }
        }
    }

    /** Updates that originated at this site so far ({@code SHOW wanrep.phases}, total). */
    private static long orderedHere(Statement st) throws SQLException {
        try (ResultSet rs = st.executeQuery("SHOW wanrep.phases")) {
            while (rs.next()) if (rs.getString("phase").equals("total")) return rs.getLong("count");
        }
        throw new AssertionError("no total in SHOW wanrep.phases");
    }
}
