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

    private SnapshotExport() {}

    public static Export export(ReplicationEngine engine, BackendTarget target, Duration lockTimeout) throws Exception {
        expire();
        List<String> dbs = new ArrayList<>();
        try (Connection c = connect(target, "postgres"); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT datname FROM pg_catalog.pg_database WHERE datallowconn AND NOT datistemplate ORDER BY datname")) {
            while (rs.next()) dbs.add(rs.getString(1));
        }
        List<Connection> held = new ArrayList<>();
        List<Snapshot> snaps = new ArrayList<>();
        ReplicationEngine.Boundary b = engine.lockAllAtBoundary(lockTimeout);
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
        String token = java.util.UUID.randomUUID().toString();
        HELD.put(token, new Held(held, System.nanoTime() + TTL.toNanos()));
        LOG.info("state transfer: snapshots of {} databases at GSN {} exported ({})", snaps.size(), b.gsn(), token);
        return new Export(token, b.gsn(), snaps);
    }

    /** The joiner has its copy: the snapshots' transactions end. */
    public static boolean release(String token) {
        Held h = HELD.remove(token);
        if (h == null) return false;
        for (Connection c : h.connections()) close(c);
        return true;
    }

    private static void expire() {
        long now = System.nanoTime();
        HELD.entrySet().removeIf(e -> {
            if (now - e.getValue().until() < 0) return false;
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
