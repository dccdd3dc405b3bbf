package org.wanrep.site;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.wanrep.backend.BackendPool;
import org.wanrep.backend.BackendTarget;
import org.wanrep.config.Config;
import org.wanrep.exec.ReplicaPosition;
import org.wanrep.gcs.GcsView;
import org.wanrep.pg.PgBinaries;
import org.wanrep.txn.ReplicationEngine;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * The joiner's half of a state transfer, when the others' logs no longer hold what its replica lacks (or
 * the replica is new): a serving site exports snapshots of its databases at one GSN g
 * ({@code SHOW wanrep.snapshot}, see {@code exec.SnapshotExport}); each database is copied with
 * {@code pg_dump --snapshot} from the donor's PostgreSQL and restored here in place of ours
 * ({@code pg_restore --create}); the replica then has exactly every GSN up to g. If the donor fails, the
 * next site is asked. Roles and other global objects are not copied.
 */
final class StateTransfer implements ReplicationEngine.StateTransferSource {
    private static final Logger LOG = LoggerFactory.getLogger(StateTransfer.class);

    private static final int DONOR_TIMEOUT_SECONDS = 60;

    private final Config cluster;
    private final String self;
    private final BackendTarget target;
    private final BackendPool pool;
    /** Write-set policies: this site's captures, whose slots go before the restore and come back after it (else null). */
    private final org.wanrep.exec.WriteSetChannel captures;
    /** Every GSN a donor exports is uniform (safe, opt-safe delivery): no other primary orders it differently. */
    private final boolean uniform;

    StateTransfer(Config cluster, String self, BackendTarget target, BackendPool pool, org.wanrep.exec.WriteSetChannel captures) {
        this.cluster = cluster;
        this.self = self;
        this.target = target;
        this.pool = pool;
        this.captures = captures;
        this.uniform = !cluster.forSite(self).get("delivery").equals("agreed");
    }

    @Override public long transfer(GcsView v) throws Exception {
        Exception last = null;
        for (String s : Site.sites(cluster)) {
            if (s.equals(self) || !v.sites().contains(s)) continue;
            try {
                return transferFrom(s, v.firstGsn() - 1);
            } catch (Exception e) {
                LOG.warn("site {}: state transfer from {} failed: {}", self, s, e.toString(), e);
                last = e;
            }
        }
        throw new IllegalStateException("no serving site could transfer its state" + (last == null ? "" : " (last: " + last.getMessage() + ")"));
    }

    @Override public long replicaBytes() {
        try (Connection c = connect("postgres"); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT sum(pg_catalog.pg_database_size(oid))::bigint FROM pg_catalog.pg_database WHERE datallowconn")) {
            return rs.next() ? rs.getLong(1) : -1;
        } catch (Exception e) {
            LOG.warn("site {}: size of the replica unknown ({}): catch-up replays the logs", self, e.toString());
            return -1;
        }
    }

    /**
     * Write-set policies: the copy is the one the donor prepared at {@code atGsn} (the joiner's view's first GSN - 1)
     * when it installed that view; write sets cannot be replayed, and from that view on the joiner may be the
     * executor the others wait for (see {@code ReplicationEngine.snapshotsForJoiners}). Otherwise any GSN will do.
     */
    private long transferFrom(String donor, long atGsn) throws Exception {
        long start = System.nanoTime();
        Config d = cluster.forSite(donor);
        String host = LogFetcher.reachable(d, "proxy.host");
        Properties p = new Properties();
        p.setProperty("user", target.user());
        if (!target.password().isEmpty()) p.setProperty("password", target.password());
        p.setProperty("preferQueryMode", "simple");
        p.setProperty("connectTimeout", "10");
        // a donor that accepts the connection but never answers (hung, or its host gone without a reset) is
        // given up after a bound, and the next site asked; the export itself waits behind what the donor has
        // ordered so far, as a log fetch does (LogFetcher: 60 s)
        p.setProperty("socketTimeout", Integer.toString(DONOR_TIMEOUT_SECONDS));
        p.setProperty("ApplicationName", "wanrep-state-transfer-" + self);
        removeLeftovers();
        Path dir = Files.createTempDirectory(Files.createDirectories(tempBase()), tempPrefix());
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://" + host + ":" + d.getInt("proxy.port") + "/postgres", p);
             Statement st = c.createStatement()) {
            String token = null;
            long gsn = -1;
            Map<String, String> snapshots = new LinkedHashMap<>(), sequences = new LinkedHashMap<>();
            try (ResultSet rs = st.executeQuery(captures != null ? "SHOW wanrep.snapshot at " + atGsn : "SHOW wanrep.snapshot")) {
                while (rs.next()) {
                    token = rs.getString(1);
                    gsn = Long.parseLong(rs.getString(2));
                    snapshots.put(rs.getString(3), rs.getString(4));
                    sequences.put(rs.getString(3), rs.getString(5));
                }
            }
            if (token == null) throw new IllegalStateException(donor + " exported no snapshot");
            LOG.info("site {}: state transfer from {} at GSN {}: {} databases", self, donor, gsn, snapshots.size());
            Exception failed = null;
            try {
                String pgHost = LogFetcher.reachable(d, "postgres.host"), pgPort = d.get("postgres.port");
                Map<String, Path> dumps = new LinkedHashMap<>();
                for (var e : snapshots.entrySet()) {
                    Path f = dir.resolve(dumps.size() + ".dump");
                    run(List.of(bin("pg_dump"), "-h", pgHost, "-p", pgPort, "-U", d.get("postgres.user"), "-Fc", "--snapshot=" + e.getValue(),
                            "-f", f.toString(), "-d", dumpConnection(e.getKey())), d.get("postgres.password"));
                    dumps.put(e.getKey(), f);
                }
                restore(dumps);
                // pg_dump read the sequences as they were when it got to them, not at the snapshot's GSN
                for (var e : sequences.entrySet())
                    if (!e.getValue().isEmpty())
                        try (Connection x = connect(e.getKey()); Statement s2 = x.createStatement()) {
                            s2.execute("SELECT " + e.getValue());
                        }
            } catch (Exception e) {
                failed = e;
                throw e;
            } finally {
                // A donor that died after our pg_dumps imported its snapshots left a copy that is still exactly
                // its state at g (the snapshots died with it), and one alive lets them expire (2 h): a failed
                // release neither undoes a finished copy nor hides why an unfinished one failed. Except under
                // agreed delivery, where this rule came first: a donor's g could hold deliveries no other member
                // held yet, so a copy from one that did not answer was taken again from the next site. Donors now
                // export only at a GSN a majority holds (SnapshotExport.export waits for it); the stricter rule
                // stays as a second guard.
                try (ResultSet rs = st.executeQuery("SHOW wanrep.snapshot release " + token)) {
                    rs.next();
                } catch (Exception e) {
                    if (failed != null) failed.addSuppressed(e);
                    else if (!uniform) throw e;
                    else LOG.warn("site {}: could not release the snapshots of {} (the copy is complete): {}", self, donor, e.toString());
                }
            }
            ReplicaPosition.prepare(target);
            ReplicaPosition.markDone(target, gsn);
            Path mark = unfinishedMark(cluster.forSite(self).get("rejoin.log_dir"), self);
            if (mark != null) Files.deleteIfExists(mark);   // the replica is whole again and says so itself
            pool.renew("postgres");
            LOG.info("site {}: state transfer from {} done in {} ms: the replica has every GSN up to {}", self, donor,
                    (System.nanoTime() - start) / 1_000_000, gsn);
            return gsn;
        } finally {
            deleteDir(dir);
        }
    }

    /** The site's own directory (rejoin.log_dir) if it has one: on its disk, not a maybe small /tmp. */
    private Path tempBase() {
        String d = cluster.forSite(self).get("rejoin.log_dir");
        return Path.of(d != null ? d : System.getProperty("java.io.tmpdir"));
    }

    /** This site's transfer directories (one process per site of a cluster: no other transfer uses them). */
    private String tempPrefix() {
        return "wanrep-transfer-" + (cluster.get("cluster.name") + "-" + self).replaceAll("[^A-Za-z0-9_.-]", "_") + "-";
    }

    /** A joiner that died mid-transfer left its dumps (a whole database each): its next transfer removes them. */
    private void removeLeftovers() {
        try (var ds = Files.newDirectoryStream(tempBase(), tempPrefix() + "*")) {
            for (Path d : ds) deleteDir(d);
        } catch (java.io.IOException e) {
            LOG.warn("site {}: could not remove an earlier transfer's files: {}", self, e.toString());
        }
    }

    private static void deleteDir(Path dir) throws java.io.IOException {
        try (var fs = Files.list(dir)) {
            for (Path f : fs.toList()) Files.deleteIfExists(f);
        }
        Files.deleteIfExists(dir);
    }

    /**
     * pg_dump's connection to the donor's PostgreSQL, for database {@code db}: bounded connect, and TCP
     * keepalives plus a user timeout so that a dump from a donor whose host vanished (no reset) fails within
     * about half a minute instead of hours, and the next site is asked.
     */
    static String dumpConnection(String db) {
        return "dbname='" + db.replace("\\", "\\\\").replace("'", "\\'") + "' connect_timeout=10"
                + " keepalives=1 keepalives_idle=10 keepalives_interval=5 keepalives_count=3 tcp_user_timeout=30000";
    }

    /**
     * Where a joiner marks that it is replacing its databases ({@code SITE.transfer} in {@code rejoin.log_dir};
     * null without one): from the first drop until "everything up to g" is recorded the replica is neither
     * the old one nor the copy, while the position rows of the databases already restored claim about g.
     */
    static Path unfinishedMark(String logDir, String site) {
        return logDir == null || logDir.isBlank() ? null : Path.of(logDir).resolve(site + ".transfer");
    }

    /**
     * At start: whether this site died mid-restore (its mark is there). Then nothing its replica records can
     * be trusted, and database postgres, which the site needs to start, may be missing: created empty (the
     * state transfer the site takes at once replaces it).
     */
    static boolean unfinished(String logDir, String site, BackendTarget target) throws java.sql.SQLException {
        Path mark = unfinishedMark(logDir, site);
        if (mark == null || !Files.exists(mark)) return false;
        LOG.warn("site {}: it died while replacing its databases by a state transfer ({}): its replica is not trusted, it takes a state transfer", site, mark);
        try (Connection c = target.jdbc("template1", "wanrep-state-transfer-" + site); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT 1 FROM pg_catalog.pg_database WHERE datname = 'postgres'")) {
            if (!rs.next()) st.execute("CREATE DATABASE postgres");
        }
        return true;
    }

    /** Our databases are replaced by the donor's (and ours that it lacks are dropped). */
    private void restore(Map<String, Path> dumps) throws Exception {
        Path mark = unfinishedMark(cluster.forSite(self).get("rejoin.log_dir"), self);
        if (mark != null) {   // written (and synced) before the first drop
            Files.createDirectories(mark.getParent());
            try (var ch = java.nio.channels.FileChannel.open(mark, java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.WRITE,
                    java.nio.file.StandardOpenOption.TRUNCATE_EXISTING)) {
                ch.write(java.nio.ByteBuffer.wrap("replacing the databases by a state transfer\n".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
                ch.force(true);
            }
        }
        if (captures != null) captures.suspendForRestore();   // a database with a slot cannot be dropped
        List<String> ours = new ArrayList<>();
        try (Connection c = connect("template1"); Statement st = c.createStatement()) {
            try (ResultSet rs = st.executeQuery("SELECT datname FROM pg_catalog.pg_database WHERE NOT datistemplate")) {
                while (rs.next()) ours.add(rs.getString(1));
            }
            for (String db : ours) if (!dumps.containsKey(db)) st.execute("DROP DATABASE " + ident(db) + " WITH (FORCE)");
            for (String db : dumps.keySet()) st.execute("DROP DATABASE IF EXISTS " + ident(db) + " WITH (FORCE)");
        }
        for (var e : dumps.entrySet())
            run(List.of(bin("pg_restore"), "-h", target.host(), "-p", Integer.toString(target.port()), "-U", target.user(), "--create",
                    "--exit-on-error", "-d", "template1", e.getValue().toString()), target.password());
        // slots anew, after every restored transaction: none of the copy is captured, everything this site executes later is
        if (captures != null) captures.resumeAfterRestore();
    }

    private static String bin(String name) { return PgBinaries.locate().bin().resolve(name).toString(); }

    private static void run(List<String> cmd, String password) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        if (password != null && !password.isEmpty()) pb.environment().put("PGPASSWORD", password);
        Process pr = pb.start();
        String out = new String(pr.getInputStream().readAllBytes());
        if (!pr.waitFor(3600, TimeUnit.SECONDS)) {
            pr.destroyForcibly();
            throw new IllegalStateException(cmd.get(0) + " timed out");
        }
        if (pr.exitValue() != 0) throw new IllegalStateException(Path.of(cmd.get(0)).getFileName() + " failed (" + pr.exitValue() + "): " + out.strip());
    }

    private Connection connect(String database) throws java.sql.SQLException {
        return target.jdbc(database, "wanrep-state-transfer-" + self);
    }

    private static String ident(String s) { return "\"" + s.replace("\"", "\"\"") + "\""; }
}
