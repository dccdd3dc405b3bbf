package org.wanrep.site;

import org.wanrep.config.Config;
import org.wanrep.gcs.jgroups.GcsSettings;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.pg.TableDigest;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * A whole cluster in this JVM for the demo and the benchmarks: one throw-away PostgreSQL per site
 * (initdb in a temporary directory, free port) and one site each, joined over loopback with the
 * WAN emulated by the latency matrix. As with {@code cluster up}, the sites seal their traffic with a
 * key made for the cluster unless the settings name {@code gcs.secret_file}.
 */
public final class InProcessCluster implements AutoCloseable {
    private final List<String> sites;
    private final List<LocalPostgres> pgs = new ArrayList<>();
    private final List<Site> running = new ArrayList<>();
    private final Config config;
    /** Holds the key the sites share when the settings name none (deleted at close). */
    private java.nio.file.Path keyDir;

    /**
     * Starts {@code sites} on latency matrix {@code matrix} (a preset or CSV naming at least these
     * sites). {@code settings} is any further configuration every site gets, e.g. {@code delivery}
     * or a workload's {@code functions.NAME.reads/writes} (see {@code ClusterCommand.configuration},
     * which builds them as {@code cluster up --workload} does); each site's ports are added here.
     */
    public InProcessCluster(List<String> sites, String matrix, Map<String, String> settings, PrintStream out) throws Exception {
        this.sites = List.copyOf(sites);
        Map<String, String> conf = new LinkedHashMap<>();
        conf.put("cluster.name", "inproc-" + System.nanoTime());
        conf.put("sites", String.join(",", sites));
        conf.put("latency_matrix", matrix);
        conf.putAll(settings);
        List<Integer> gcsPorts = GcsSettings.freePorts(sites.size());
        try {
            if (!conf.containsKey("gcs.secret_file")) {
                // as cluster up: the sites seal what they exchange with a key made for this cluster (set gcs.secret_file
                // to a file of your own, or to nothing for clear text)
                keyDir = java.nio.file.Files.createTempDirectory("wanrep-key-");
                conf.put("gcs.secret_file", org.wanrep.gcs.jgroups.GcsSecret.generate(keyDir.resolve("gcs.secret")).toString());
            }
            if (out != null) for (String s : sites) out.printf("site %s: initdb and start PostgreSQL...%n", s);
            pgs.addAll(LocalPostgres.startTemporary(sites.size()));
            for (int i = 0; i < sites.size(); i++) {
                LocalPostgres pg = pgs.get(i);
                String s = sites.get(i);
                conf.put("site." + s + ".postgres.port", Integer.toString(pg.port()));
                conf.put("site." + s + ".postgres.socket_dir", pg.dataDir().toString());   // the proxy's own connections: Unix socket
                conf.put("site." + s + ".gcs.port", Integer.toString(gcsPorts.get(i)));
                conf.put("site." + s + ".proxy.port", Integer.toString(LocalPostgres.freePort()));
            }
            config = Config.build(conf, List.of());
            if (out != null) out.printf("starting %d sites (%s delivery, latency matrix %s), waiting for the group...%n", sites.size(), config.get("delivery"), matrix);
            running.addAll(Site.startAll(config, sites, Duration.ofSeconds(90)));
        } catch (Exception e) {
            close();
            throw e;
        }
    }

    public List<String> sites() { return sites; }
    public Config config() { return config; }
    public Site site(int i) { return running.get(i); }
    public LocalPostgres postgres(int i) { return pgs.get(i); }

    public Connection connect(int i) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", "postgres");
        return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + running.get(i).proxyPort() + "/postgres", p);
    }

    /** Waits until every site delivered the same sequence and finished all of it. */
    public void awaitQuiescent(Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < end) {
            if (running.stream().allMatch(s -> s.engine().pending() == 0) && running.stream().map(s -> s.engine().lastGsn()).distinct().count() == 1) return;
            Thread.sleep(20);
        }
        throw new IllegalStateException("sites still busy after " + timeout);
    }

    /** {@code cluster check} on this cluster: verdict per table. */
    public Map<String, String> check() throws Exception {
        awaitQuiescent(Duration.ofSeconds(120));
        List<Map<String, TableDigest.Digest>> ds = new ArrayList<>();
        for (LocalPostgres pg : pgs) {
            try (Connection c = pg.connect()) {
                ds.add(TableDigest.of(c));
            }
        }
        return TableDigest.compare(sites, ds);
    }

    @Override public void close() {
        for (Site s : running) s.clusterStopping();
        for (Site s : running) {
            try {
                s.close();
            } catch (RuntimeException ignored) {
                // closing everything
            }
        }
        for (LocalPostgres pg : pgs) {
            try {
                pg.close();
            } catch (Exception ignored) {
                // closing everything
            }
        }
        if (keyDir != null) {
            try {
                java.nio.file.Files.deleteIfExists(keyDir.resolve("gcs.secret"));
                java.nio.file.Files.deleteIfExists(keyDir);
            } catch (java.io.IOException ignored) {
                // a temporary directory left behind
            }
        }
    }
}
