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
    final Config config;

    TestCluster(List<String> sites, String matrix, Map<String, String> extra) throws Exception {
        this.sites = sites;
        Map<String, String> m = new HashMap<>();
        m.put("cluster.name", "test-" + System.nanoTime());
        m.put("sites", String.join(",", sites));
        m.put("latency_matrix", matrix);
        m.put("pool.size", "8");
        List<Integer> gcsPorts = GcsSettings.freePorts(sites.size());
        List<Integer> proxyPorts = GcsSettings.freePorts(sites.size());
        for (int i = 0; i < sites.size(); i++) {
            LocalPostgres pg = LocalPostgres.startTemporary();
            pgs.add(pg);
            String s = sites.get(i);
            m.put("site." + s + ".postgres.port", Integer.toString(pg.port()));
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
                    started[k] = Site.start(config, sites.get(k), Duration.ofSeconds(60));
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

    int proxyPort(int i) { return config.forSite(sites.get(i)).getInt("proxy.port"); }

    String url(int i, String extraParams) {
        return "jdbc:postgresql://127.0.0.1:" + proxyPort(i) + "/postgres" + (extraParams.isEmpty() ? "" : "?" + extraParams);
    }

    Connection connect(int i) throws Exception { return connect(i, ""); }

    Connection connect(int i, String extraParams) throws Exception {
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

    /** Verdict per table; every value "same" when the replicas are identical. */
    Map<String, String> check() throws Exception { return TableDigest.compare(sites, digests()); }

    @Override public void close() throws Exception {
        for (Site s : running) s.close();
        for (LocalPostgres pg : pgs) pg.close();
    }
}
