package org.wanrep.frontend;

import org.wanrep.config.Config;
import org.wanrep.gcs.jgroups.GcsSettings;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.pg.TableDigest;
import org.wanrep.site.Site;

import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/** N real PostgreSQL replicas and N in-process wanrep sites on loopback, for tests. */
final class TestCluster implements AutoCloseable {
    final List<String> sites;
    final List<LocalPostgres> pgs = new ArrayList<>();
    final List<Site> running = new ArrayList<>();
    Config config;   // replaced by addSite (a superset: the others' settings stay as they were)

    TestCluster(List<String> sites, String matrix, Map<String, String> extra) throws Exception {
        this(sites, matrix, extra, java.util.function.UnaryOperator.identity());
    }

    TestCluster(List<String> sites, String matrix, Map<String, String> extra,
                java.util.function.UnaryOperator<org.wanrep.gcs.GcsListener> wrapper) throws Exception {
        this(sites, matrix, extra, wrapper, (i, pg) -> { });
    }

    /** What a test does to replica i (e.g. change a server setting and restart it) before the sites start. */
    interface ReplicaSetup { void prepare(int i, LocalPostgres pg) throws Exception; }

    TestCluster(List<String> sites, String matrix, Map<String, String> extra,
                java.util.function.UnaryOperator<org.wanrep.gcs.GcsListener> wrapper, ReplicaSetup setup) throws Exception {
        this.sites = new ArrayList<>(sites);
        Map<String, String> m = new HashMap<>();
        m.put("cluster.name", "test-" + System.nanoTime());
        m.put("sites", String.join(",", sites));
        m.put("latency_matrix", matrix);
        m.put("pool.size", "8");
        List<Integer> gcsPorts = GcsSettings.freePorts(sites.size());
        List<Integer> proxyPorts = GcsSettings.freePorts(sites.size());
        pgs.addAll(LocalPostgres.startTemporary(sites.size()));
        for (int i = 0; i < sites.size(); i++) {
            LocalPostgres pg = pgs.get(i);
            setup.prepare(i, pg);
            String s = sites.get(i);
            m.put("site." + s + ".postgres.port", Integer.toString(pg.port()));
            m.put("site." + s + ".postgres.socket_dir", pg.dataDir().toString());
            m.put("site." + s + ".gcs.port", Integer.toString(gcsPorts.get(i)));
            m.put("site." + s + ".proxy.port", Integer.toString(proxyPorts.get(i)));
        }
        m.putAll(extra);
        config = Config.build(m, List.of());
        List<Thread> starters = new ArrayList<>();
        Site[] started = new Site[sites.size()];
        Exception[] failed = new Exception[1];
        for (int i = 0; i < sites.size(); i++) {
            int k = i;
            starters.add(Thread.ofPlatform().start(() -> {
                try {
                    started[k] = Site.start(config, sites.get(k), Duration.ofSeconds(60), wrapper);
                } catch (Exception e) {
                    failed[0] = e;
                }
            }));
        }
        for (Thread t : starters) t.join();
        for (Site s : started) if (s != null) running.add(s);
        if (failed[0] != null) {
            close();
            throw failed[0];
        }
    }

    Site site(int i) { return running.stream().filter(s -> s.name().equals(sites.get(i))).findFirst().orElseThrow(); }

    /** Crashes site i (its proxy, member and engine; its PostgreSQL keeps running for inspection). */
    void crash(int i) {
        Site s = site(i);
        s.crash();
        running.remove(s);
    }

    /** Starts site i again (after {@link #crash}); returns once it serves or catches up. */
    Site restart(int i) throws Exception {
        Site s = Site.start(config, sites.get(i), Duration.ofSeconds(60));
        running.add(s);
        return s;
    }

    /**
     * Starts a new site with an empty replica, configured as {@code cluster add-site} configures one: every
     * setting of the others, its own ports, and {@code gcs.bootstrap = off}. Its addition must be ordered first.
     */
    Site addSite(String name) throws Exception {
        LocalPostgres pg = LocalPostgres.startTemporary();
        pgs.add(pg);
        sites.add(name);
        Map<String, String> m = new HashMap<>(config.explicit());
        List<Integer> ports = GcsSettings.freePorts(2);
        m.put("sites", String.join(",", sites));
        m.put("site." + name + ".postgres.port", Integer.toString(pg.port()));
        m.put("site." + name + ".postgres.socket_dir", pg.dataDir().toString());
        m.put("site." + name + ".gcs.port", Integer.toString(ports.get(0)));
        m.put("site." + name + ".proxy.port", Integer.toString(ports.get(1)));
        m.put("site." + name + ".gcs.bootstrap", "off");
        config = Config.build(m, List.of());
        Site s = Site.start(config, name, Duration.ofSeconds(60));
        running.add(s);
        return s;
    }

    /** Forgets site i after it stopped by itself (removed from the cluster): it no longer counts as running. */
    void stopped(int i) {
        running.removeIf(s -> s.name().equals(sites.get(i)));
    }

    int proxyPort(int i) { return config.forSite(sites.get(i)).getInt("proxy.port"); }

    String url(int i, String extraParams) {
        return "jdbc:postgresql://127.0.0.1:" + proxyPort(i) + "/postgres" + (extraParams.isEmpty() ? "" : "?" + extraParams);
    }

    Connection connect(int i) throws java.sql.SQLException { return connect(i, ""); }

    Connection connect(int i, String extraParams) throws java.sql.SQLException {
        Properties p = new Properties();
        p.setProperty("user", "postgres");
        return DriverManager.getConnection(url(i, extraParams), p);
    }

    /** Digests of every user table at every replica: equal lists mean identical replicas. */
    List<Map<String, TableDigest.Digest>> digests() throws Exception {
        List<Map<String, TableDigest.Digest>> out = new ArrayList<>();
        for (LocalPostgres pg : pgs) {
            try (Connection c = pg.connect()) {
                out.add(TableDigest.of(c));
            }
        }
        return out;
    }

    /** Verdict per table once every site has finished what it was delivered; all "same" when identical. */
    Map<String, String> check() throws Exception {
        awaitQuiescent();
        return TableDigest.compare(sites, digests());
    }

    /** Verdict per table across the given sites only (e.g. the survivors of a crash). */
    Map<String, String> check(List<Integer> which) throws Exception {
        awaitQuiescent();
        List<String> names = new ArrayList<>();
        List<Map<String, TableDigest.Digest>> ds = new ArrayList<>();
        for (int i : which) {
            names.add(sites.get(i));
            try (Connection c = pgs.get(i).connect()) {
                ds.add(TableDigest.of(c));
            }
        }
        return TableDigest.compare(names, ds);
    }

    /**
     * pgbench's own invariant at every replica: the balances of accounts, tellers and branches and the history's deltas
     * add up, and the history holds one row per transaction pgbench reported processed (acknowledged).
     */
    void assertPgbenchInvariant(long processed) throws Exception {
        for (int i = 0; i < pgs.size(); i++) {
            try (Connection x = pgs.get(i).connect(); java.sql.Statement st = x.createStatement();
                 java.sql.ResultSet r = st.executeQuery("SELECT (SELECT sum(abalance) FROM pgbench_accounts), (SELECT sum(tbalance) FROM pgbench_tellers),"
                         + " (SELECT sum(bbalance) FROM pgbench_branches), (SELECT coalesce(sum(delta), 0) FROM pgbench_history),"
                         + " (SELECT count(*) FROM pgbench_history)")) {
                r.next();
                long a = r.getLong(1);
                org.assertj.core.api.Assertions.assertThat(List.of(r.getLong(2), r.getLong(3), r.getLong(4))).as("balances and history at replica " + i).containsOnly(a);
                org.assertj.core.api.Assertions.assertThat(r.getLong(5)).as("one history row per acknowledged transaction at replica " + i).isEqualTo(processed);
            }
        }
    }

    /** Waits until no running site has a delivered transaction left to finish. */
    void awaitQuiescent() throws InterruptedException {
        long end = System.nanoTime() + 60_000_000_000L;
        while (System.nanoTime() < end) {
            // caught up: every site delivered the same sequence and finished all of it
            if (running.stream().allMatch(s -> s.engine().pending() == 0)
                    && running.stream().map(s -> s.engine().lastGsn()).distinct().count() == 1) return;
            Thread.sleep(20);
        }
        throw new IllegalStateException("sites still busy after 60 s: " + running.stream().map(s -> s.engine().describe()).toList());
    }

    /**
     * One client per running site until {@code stop}: conflicting updates of t's rows 1-10 (in both orders) and an
     * insert into h of a fresh id per request, added to {@code acked} once acknowledged; a failed request (a site
     * crashed, a view change: outcome unknown) is not, and its client connects again.
     */
    List<Thread> conflictingWriters(int sites, long seed, java.util.Set<String> acked, java.util.concurrent.atomic.AtomicBoolean stop) {
        List<Thread> writers = new ArrayList<>();
        for (int i = 0; i < sites; i++) {
            int site = i;
            java.util.Random rnd = new java.util.Random(seed * 31 + i);
            writers.add(Thread.ofPlatform().start(() -> {
                int n = 0;
                while (!stop.get()) {
                    try (Connection x = connect(site); java.sql.Statement st = x.createStatement()) {
                        while (!stop.get()) {
                            String id = seed + "-" + site + "-" + n++;
                            st.execute("UPDATE t SET v = v + 1 WHERE id = " + (1 + rnd.nextInt(10)) + "; UPDATE t SET v = v * 2 % 1000003 WHERE id = "
                                    + (1 + rnd.nextInt(10)) + "; INSERT INTO h VALUES ('" + id + "')");
                            acked.add(id);
                        }
                    } catch (java.sql.SQLException e) {
                        try {
                            Thread.sleep(100);
                        } catch (InterruptedException x) {
                            return;
                        }
                    }
                }
            }));
        }
        return writers;
    }

    /** The first column of the first row that site {@code i} answers to {@code command} (e.g. SHOW wanrep.sites add d). */
    String show(int i, String command) throws java.sql.SQLException {
        try (Connection x = connect(i); java.sql.Statement st = x.createStatement(); java.sql.ResultSet rs = st.executeQuery(command)) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** What {@link #awaitServing} saw: whether the site served within 60 s, and how many requests it refused before. */
    record Serving(boolean served, int refused) {}

    /**
     * Asks site {@code k} for {@code SELECT count(*) FROM h} until it answers (at most 60 s): an answer must count at
     * least {@code atLeast} rows (never a stale replica), and until then only the SQLSTATEs {@code refusals} of a site
     * not serving yet (or of a backend that a state transfer ended) are accepted.
     */
    Serving awaitServing(int k, int atLeast, String... refusals) throws Exception { return awaitServing(k, "h", atLeast, refusals); }

    /** {@link #awaitServing(int, int, String...)} counting the rows of {@code table}. */
    Serving awaitServing(int k, String table, int atLeast, String... refusals) throws Exception {
        long end = System.nanoTime() + 60_000_000_000L;
        int refused = 0;
        while (System.nanoTime() < end) {
            try (Connection x = connect(k); java.sql.Statement st = x.createStatement(); java.sql.ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table)) {
                rs.next();
                org.assertj.core.api.Assertions.assertThat(rs.getInt(1)).as("site %s answered from a stale replica", sites.get(k)).isGreaterThanOrEqualTo(atLeast);
                return new Serving(true, refused);
            } catch (java.sql.SQLException e) {
                org.assertj.core.api.Assertions.assertThat(e.getSQLState()).as(e.getMessage()).isIn((Object[]) refusals);
                refused++;
                Thread.sleep(20);
            }
        }
        return new Serving(false, refused);
    }

    @Override public void close() throws Exception {
        for (Site s : running) s.close();
        for (LocalPostgres pg : pgs) pg.close();
    }
}
