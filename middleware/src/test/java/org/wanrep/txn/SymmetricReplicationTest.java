package org.wanrep.txn;

import org.wanrep.wire.WireMessage;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.wanrep.exec.JdbcTxnExecutor;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.jgroups.GcsSettings;
import org.wanrep.gcs.jgroups.JGroupsGcs;
import org.wanrep.gcs.wan.LatencyMatrix;
import org.wanrep.lock.TableSet;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.pg.TableDigest;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Symmetric replication through the engine, real JGroups members on an emulated WAN (first three
 * na4 sites) and one real PostgreSQL per site: clients at every site submit conflicting bank
 * transfers and counter increments concurrently; afterwards every replica must be identical, the
 * total balance unchanged and each counter equal to its acknowledged increments. Increments commute,
 * so each counter also keeps the history of its writers: a different serialization order at any
 * site shows as a different history.
 */
class SymmetricReplicationTest {
    static final int ACCOUNTS = 10, COUNTERS = 4, START = 1000;
    static LatencyMatrix matrix;
    static List<LocalPostgres> pgs = new ArrayList<>();

    @BeforeAll
    static void startReplicas() throws Exception {
        matrix = LatencyMatrix.load("na4").first(3);
        for (int i = 0; i < 3; i++) pgs.add(LocalPostgres.startTemporary());
    }

    @AfterAll
    static void stopReplicas() throws Exception {
        for (LocalPostgres p : pgs) p.close();
    }

    private static void resetData() throws Exception {
        for (LocalPostgres p : pgs) {
            try (Connection c = p.connect(); Statement st = c.createStatement()) {
                st.execute("DROP TABLE IF EXISTS accounts, counters");
                st.execute("CREATE TABLE accounts(id int primary key, balance int not null)");
                st.execute("CREATE TABLE counters(id int primary key, n int not null, noise int not null default 0, hist text not null default '')");
                st.execute("INSERT INTO accounts SELECT g, " + START + " FROM generate_series(1," + ACCOUNTS + ") g");
                st.execute("INSERT INTO counters SELECT g, 0 FROM generate_series(1," + COUNTERS + ") g");
            }
        }
    }

    private static WireMessageListBuilder q(String sql) { return new WireMessageListBuilder().q(sql); }

    static final class WireMessageListBuilder {
        final List<WireMessage> ms = new ArrayList<>();
        WireMessageListBuilder q(String sql) {
            ms.add(new WireMessage((byte) 'Q', (sql + "\0").getBytes(StandardCharsets.UTF_8)));
            return this;
        }
    }

    @ParameterizedTest
    @EnumSource(value = Delivery.class, names = {"AGREED", "SAFE", "OPT_SAFE"})
    void concurrentConflictingTransactionsLeaveIdenticalReplicas(Delivery delivery) throws Exception {
        resetData();
        long seed = Long.getLong("wanrep.repl.seed", new Random().nextLong());
        System.out.println(delivery + ": replication test seed " + seed);
        List<String> sites = matrix.sites();
        List<Integer> ports = GcsSettings.freePorts(sites.size());
        String cluster = "repl-" + System.nanoTime();
        List<JdbcTxnExecutor> execs = new ArrayList<>();
        List<ReplicationEngine> engines = new ArrayList<>();
        List<JGroupsGcs> members = new ArrayList<>();
        try {
            for (int i = 0; i < sites.size(); i++) {
                JdbcTxnExecutor ex = new JdbcTxnExecutor(pgs.get(i).jdbcUrl("postgres"), "postgres", "", 8);
                ReplicationEngine e = new ReplicationEngine(sites.get(i), delivery, ex);
                JGroupsGcs g = JGroupsGcs.start(GcsSettings.loopback(cluster, sites.get(i), sites, ports, matrix), e);
                e.attach(g);
                execs.add(ex);
                engines.add(e);
                members.add(g);
            }
            for (JGroupsGcs g : members) g.awaitPrimary(sites.size(), Duration.ofSeconds(30));

            AtomicLongArray acked = new AtomicLongArray(COUNTERS + 1);
            List<Thread> clients = new ArrayList<>();
            for (int s = 0; s < sites.size(); s++) {
                for (int c = 0; c < 3; c++) {
                    ReplicationEngine e = engines.get(s);
                    Random r = new Random(seed * 31 + s * 7 + c);
                    clients.add(Thread.ofPlatform().start(() -> {
                        for (int k = 0; k < 15; k++) {
                            try {
                                TxnRequest req;
                                int counter = -1;
                                if (r.nextBoolean()) {
                                    int a = 1 + r.nextInt(ACCOUNTS), b = 1 + r.nextInt(ACCOUNTS), x = 1 + r.nextInt(50);
                                    req = new TxnRequest(e.nextId(), TxnRequest.Kind.AUTOCOMMIT, TableSet.of(Set.of(), Set.of("public.accounts")), "postgres",
                                            q("UPDATE accounts SET balance = balance - " + x + " WHERE id = " + a)
                                                    .q("UPDATE accounts SET balance = balance + " + x + " WHERE id = " + b).ms, 0, r.nextLong());
                                } else {
                                    counter = 1 + r.nextInt(COUNTERS);
                                    // random() must agree everywhere: seeded by the origin
                                    req = new TxnRequest(e.nextId(), TxnRequest.Kind.AUTOCOMMIT, TableSet.of(Set.of(), Set.of("public.counters")), "postgres",
                                            q("UPDATE counters SET n = n + 1, noise = noise + floor(random() * 1000)::int, hist = hist || '," + e.nextId() + "' WHERE id = " + counter).ms, 0, r.nextLong());
                                }
                                Txn t = e.submit(req).get(60, TimeUnit.SECONDS);
                                if (t.state() == Txn.State.COMMITTED && counter > 0) acked.incrementAndGet(counter);
                            } catch (Exception ex) {
                                throw new AssertionError(ex);
                            }
                        }
                    }));
                }
            }
            for (Thread t : clients) t.join();

            // every site applies everything: wait until the replicas agree, then check the invariants
            long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            Map<String, String> verdict;
            do {
                verdict = compare();
                if (verdict.values().stream().allMatch("same"::equals)) break;
                Thread.sleep(100);
            } while (System.nanoTime() < end);
            assertThat(verdict).as("replicas after %s load, seed %d", delivery, seed).allSatisfy((k, v) -> assertThat(v).isEqualTo("same"));
            for (LocalPostgres p : pgs) {
                try (Connection c = p.connect(); Statement st = c.createStatement()) {
                    try (ResultSet rs = st.executeQuery("SELECT sum(balance) FROM accounts")) {
                        rs.next();
                        assertThat(rs.getLong(1)).as("total balance").isEqualTo((long) ACCOUNTS * START);
                    }
                    for (int k = 1; k <= COUNTERS; k++) {
                        try (ResultSet rs = st.executeQuery("SELECT n FROM counters WHERE id = " + k)) {
                            rs.next();
                            assertThat(rs.getLong(1)).as("counter %d", k).isEqualTo(acked.get(k));
                        }
                    }
                }
            }
        } finally {
            for (JGroupsGcs g : members) g.close();
            for (JdbcTxnExecutor ex : execs) ex.close();
        }
    }

    /**
     * The sequencer's site crashes (no LEAVE) while clients at every site write. Survivors go on,
     * end identical, and keep every commit they acknowledged; with safe delivery also every commit
     * the crashed site acknowledged (uniform delivery: it was held everywhere before it committed).
     */
    @ParameterizedTest
    @EnumSource(value = Delivery.class, names = {"AGREED", "SAFE"})
    void siteCrashMidLoad(Delivery delivery) throws Exception {
        resetData();
        long seed = Long.getLong("wanrep.repl.seed", new Random().nextLong());
        System.out.println(delivery + ": crash test seed " + seed);
        List<String> sites = matrix.sites();
        List<Integer> ports = GcsSettings.freePorts(sites.size());
        String cluster = "crash-" + System.nanoTime();
        List<JdbcTxnExecutor> execs = new ArrayList<>();
        List<ReplicationEngine> engines = new ArrayList<>();
        List<JGroupsGcs> members = new ArrayList<>();
        try {
            for (int i = 0; i < sites.size(); i++) {
                JdbcTxnExecutor ex = new JdbcTxnExecutor(pgs.get(i).jdbcUrl("postgres"), "postgres", "", 8);
                ReplicationEngine e = new ReplicationEngine(sites.get(i), delivery, ex);
                JGroupsGcs g = JGroupsGcs.start(GcsSettings.loopback(cluster, sites.get(i), sites, ports, matrix), e);
                e.attach(g);
                execs.add(ex);
                engines.add(e);
                members.add(g);
            }
            for (JGroupsGcs g : members) g.awaitPrimary(sites.size(), Duration.ofSeconds(30));
            // acknowledged increments per counter, split by the acknowledging site
            AtomicLongArray[] acked = new AtomicLongArray[sites.size()];
            List<Thread> clients = new ArrayList<>();
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            for (int s = 0; s < sites.size(); s++) {
                acked[s] = new AtomicLongArray(COUNTERS + 1);
                AtomicLongArray mine = acked[s];
                ReplicationEngine e = engines.get(s);
                JGroupsGcs g = members.get(s);
                for (int c = 0; c < 2; c++) {
                    Random r = new Random(seed * 17 + s * 5 + c);
                    clients.add(Thread.ofPlatform().start(() -> {
                        while (!stop.get() && !g.channel().isClosed()) {
                            int counter = 1 + r.nextInt(COUNTERS);
                            TxnRequest req = new TxnRequest(e.nextId(), TxnRequest.Kind.AUTOCOMMIT, TableSet.of(Set.of(), Set.of("public.counters")), "postgres",
                                    q("UPDATE counters SET n = n + 1, hist = hist || '," + e.nextId() + "' WHERE id = " + counter).ms, 0, r.nextLong());
                            try {
                                Txn t = e.submit(req).get(20, TimeUnit.SECONDS);
                                if (t.state() == Txn.State.COMMITTED) mine.incrementAndGet(counter);
                            } catch (Exception ex) {
                                // not acknowledged: the client would see an error (its site is gone or not primary)
                            }
                        }
                    }));
                }
            }
            Thread.sleep(1500 + new Random(seed).nextInt(1000));
            members.get(0).crash();   // montreal: the sequencer
            engines.get(0).shutdown("crashed by the test");
            Thread.sleep(3000);
            stop.set(true);
            for (Thread t : clients) t.join(30_000);
            List<LocalPostgres> survivors = pgs.subList(1, pgs.size());
            long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            Map<String, String> verdict;
            do {
                verdict = compare(survivors, sites.subList(1, sites.size()));
                if (verdict.values().stream().allMatch("same"::equals)) break;
                Thread.sleep(100);
            } while (System.nanoTime() < end);
            assertThat(verdict).as("survivors after the crash, %s, seed %d", delivery, seed).allSatisfy((k, v) -> assertThat(v).isEqualTo("same"));
            try (Connection c = survivors.get(0).connect(); Statement st = c.createStatement()) {
                for (int k = 1; k <= COUNTERS; k++) {
                    try (ResultSet rs = st.executeQuery("SELECT n FROM counters WHERE id = " + k)) {
                        rs.next();
                        long have = rs.getLong(1);
                        long bySurvivors = acked[1].get(k) + acked[2].get(k);
                        assertThat(have).as("counter %d holds every increment a survivor acknowledged", k).isGreaterThanOrEqualTo(bySurvivors);
                        if (delivery == Delivery.SAFE)
                            assertThat(have).as("counter %d holds every increment any site acknowledged (safe)", k).isGreaterThanOrEqualTo(bySurvivors + acked[0].get(k));
                    }
                }
            }
            assertThat(acked[1].get(1) + acked[1].get(2) + acked[2].get(3) + acked[2].get(4) + acked[1].get(3) + acked[2].get(1)).isPositive();
        } finally {
            for (JGroupsGcs g : members) g.close();
            for (JdbcTxnExecutor ex : execs) ex.close();
        }
    }

    private static Map<String, String> compare(List<LocalPostgres> which, List<String> names) throws Exception {
        List<Map<String, TableDigest.Digest>> ds = new ArrayList<>();
        for (LocalPostgres p : which) try (Connection c = p.connect()) { ds.add(TableDigest.of(c)); }
        return TableDigest.compare(names, ds);
    }

    private static Map<String, String> compare() throws Exception {
        List<Map<String, TableDigest.Digest>> ds = new ArrayList<>();
        for (LocalPostgres p : pgs) try (Connection c = p.connect()) { ds.add(TableDigest.of(c)); }
        return TableDigest.compare(matrix.sites(), ds);
    }
}
