package org.wanrep.exec;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.wanrep.backend.BackendTarget;
import org.wanrep.txn.ReplicationEngine;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The donor's half of a state transfer: snapshots of every database of this replica at one GSN. The engine
 * queues a local all-tables lock behind everything ordered so far (GSN g) and, once granted (every transaction
 * up to g committed here, nothing after it started), a REPEATABLE READ transaction per database exports its
 * snapshot; the lock goes at once, so the site keeps serving. The transactions stay open, holding the snapshots
 * for {@code pg_dump --snapshot}, until the joiner releases them or {@link #TTL} passes.
 */
public final class SnapshotExport {
    private static final Logger LOG = LoggerFactory.getLogger(SnapshotExport.class);
    static final Duration TTL = Duration.ofHours(2);

    /** An exported snapshot of one database. */
    /**
     * An exported snapshot of one database, and its sequences' states at the same GSN as a list of setval
     * calls (null: none): pg_dump reads sequences outside any snapshot, as they are when it gets to them.
     */
    public record Snapshot(String database, String id, String sequences) {}

    /** Snapshots of every database at GSN {@code gsn}, held under {@code token}. */
    public record Export(String token, long gsn, List<Snapshot> snapshots) {}

    private record Held(List<Connection> connections, long until) {}

    private static final Map<String, Held> HELD = new ConcurrentHashMap<>();

    private static final java.util.concurrent.atomic.AtomicLong EXPORTS = new java.util.concurrent.atomic.AtomicLong();

    private SnapshotExport() {}

    /** Snapshot sets exported by this process so far (every site of it; tests count donors' work with it). */
    public static long exports() { return EXPORTS.get(); }

    public static Export export(ReplicationEngine engine, BackendTarget target, Duration lockTimeout) throws Exception {
        expire();
        List<String> dbs = databases(target);
        Export x = exportUnder(engine, target, engine.lockAllAtBoundary(lockTimeout), dbs, TTL);
        // the copy must hold only what every later primary component holds (AGREED deliveries may not be yet)
        if (!engine.awaitUniform(x.gsn(), Duration.ofSeconds(30))) {
            release(x.token());
            throw new IllegalStateException("GSN " + x.gsn() + " is not yet held by a majority of the group: no copy of it is handed out");
        }
        return x;
    }

    private static List<String> databases(BackendTarget target) throws SQLException {
        List<String> dbs = new ArrayList<>();
        try (Connection c = connect(target, "postgres"); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT datname FROM pg_catalog.pg_database WHERE datallowconn AND NOT datistemplate ORDER BY datname")) {
            while (rs.next()) dbs.add(rs.getString(1));
        }
        return dbs;
    }

    /** Exports prepared for joiners at a view's first GSN - 1, by GSN (write-set policies; see {@link #prepareForJoiners}). */
    private static final Map<PreparedKey, Export> PREPARED = new ConcurrentHashMap<>();
    /** By engine too: sites in one process (tests) share these maps, and each prepares at the same GSN. */
    private record PreparedKey(ReplicationEngine engine, long gsn) {}
    /**
     * A prepared export nobody asked for ends after this (it holds back vacuum): a joiner asks within seconds of
     * its view, and every serving site prepares one for it, of which it takes one.
     */
    static final Duration PREPARED_TTL = Duration.ofMinutes(2);

    /**
     * Write-set policies: a primary view took in a member that was not in the last one, and the engine queued the
     * all-tables lock {@code b} at the view's first GSN - 1 ({@link ReplicationEngine#snapshotsForJoiners}). Once it
     * is granted, snapshots are exported under it and kept for the joiner ({@link #prepared}); the lock goes at once.
     * Never blocks the caller (the delivery thread: what the lock waits for may need it).
     */
    public static void prepareForJoiners(ReplicationEngine engine, BackendTarget target, ReplicationEngine.Boundary b) {
        Thread.ofVirtual().name("wanrep-joiner-snapshot").start(() -> {
            try {
                ReplicationEngine.Boundary granted = engine.awaitBoundary(b, Duration.ofMinutes(10));
                List<String> dbs;
                try {
                    dbs = databases(target);
                } catch (SQLException | RuntimeException e) {
                    engine.unlockLocal(granted.lock());
                    throw e;
                }
                Export x = exportUnder(engine, target, granted, dbs, PREPARED_TTL);
                PREPARED.put(new PreparedKey(engine, x.gsn()), x);
            } catch (Exception e) {
                engine.unlockLocal(b.lock());   // never left holding every table
                LOG.warn("state transfer: could not prepare snapshots at GSN {} for a joining site: {}", b.gsn(), e.toString());
            }
        });
    }

    /**
     * The export prepared for joiners at {@code gsn}, waiting up to {@code wait} for it (it may still be queued); null if
     * none. At GSN 0 none is prepared (a joiner at GSN 1 rarely needs one): one is taken now, if nothing was ordered yet.
     */
    public static Export prepared(ReplicationEngine engine, BackendTarget target, long gsn, Duration wait) throws Exception {
        if (gsn == 0) {
            Export x = export(engine, target, wait);
            if (x.gsn() == 0) return x;
            release(x.token());
            return null;
        }
        long until = System.nanoTime() + wait.toNanos();
        while (true) {
            expire();
            Export x = PREPARED.get(new PreparedKey(engine, gsn));
            // taken: from now on it lives as long as any export (the joiner's pg_dump may take long), until released
            if (x != null && HELD.computeIfPresent(x.token(), (k, h) -> new Held(h.connections(), System.nanoTime() + TTL.toNanos())) != null)
                return x;
            if (System.nanoTime() > until) return null;
            Thread.sleep(20);
        }
    }

    private static Export exportUnder(ReplicationEngine engine, BackendTarget target, ReplicationEngine.Boundary b, List<String> dbs, Duration ttl)
            throws Exception {
        List<Connection> held = new ArrayList<>();
        List<Snapshot> snaps = new ArrayList<>();
        try {
            for (String db : dbs) {
                Connection c = connect(target, db);
                held.add(c);
                c.setAutoCommit(false);
                c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
                c.setReadOnly(true);
                String id, seqs;
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_catalog.pg_export_snapshot()")) {
                    rs.next();
                    id = rs.getString(1);
                }
                // under the lock nothing advances them: their values now are the ones at the GSN
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(WriteSetSql.sequenceStates(org.wanrep.lock.TableSet.allTables()))) {
                    rs.next();
                    seqs = rs.getString(1);
                }
                snaps.add(new Snapshot(db, id, seqs));
            }
        } catch (SQLException | RuntimeException e) {
            for (Connection c : held) close(c);
            throw e;
        } finally {
            engine.unlockLocal(b.lock());
        }
        EXPORTS.incrementAndGet();
        String token = java.util.UUID.randomUUID().toString();
        HELD.put(token, new Held(held, System.nanoTime() + ttl.toNanos()));
        // expired by the clock too, not only when the next transfer comes by (there may be none for days)
        Thread.ofVirtual().name("wanrep-snapshot-expiry").start(() -> {
            try {
                Thread.sleep(ttl.plusSeconds(1));
                expire();
                // a taken one lives on until released or its later deadline: look again then
                while (HELD.containsKey(token)) {
                    Thread.sleep(Duration.ofMinutes(1));
                    expire();
                }
            } catch (InterruptedException ignored) {
                // the process ends
            }
        });
        LOG.info("state transfer: snapshots of {} databases at GSN {} exported ({})", snaps.size(), b.gsn(), token);
        return new Export(token, b.gsn(), snaps);
    }

    /** The joiner has its copy: the snapshots' transactions end. */
    public static boolean release(String token) {
        Held h = HELD.remove(token);
        PREPARED.values().removeIf(x -> x.token().equals(token));
        if (h == null) return false;
        for (Connection c : h.connections()) close(c);
        return true;
    }

    private static void expire() {
        long now = System.nanoTime();
        HELD.entrySet().removeIf(e -> {
            if (now - e.getValue().until() < 0) return false;
            PREPARED.values().removeIf(x -> x.token().equals(e.getKey()));
            for (Connection c : e.getValue().connections()) close(c);
            return true;
        });
    }

    private static void close(Connection c) {
        try {
            c.close();
        } catch (SQLException ignored) {
            // closing
        }
    }

    private static Connection connect(BackendTarget target, String database) throws SQLException {
        return target.jdbc(database, "wanrep-snapshot");
    }
}
