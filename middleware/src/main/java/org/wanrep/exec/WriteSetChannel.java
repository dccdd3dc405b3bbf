package org.wanrep.exec;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.wanrep.backend.BackendTarget;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.Gcs;
import org.wanrep.txn.Txn;
import org.wanrep.txn.TxnExecutor;
import org.wanrep.txn.WriteSetIo;
import org.wanrep.txn.WriteSetMessage;
import org.wanrep.txn.WriteSetMessageCodec;
import org.wanrep.wire.WireMessage;
import org.wanrep.writeset.WriteSet;
import org.wanrep.writeset.apply.WriteSetApplier;
import org.wanrep.writeset.capture.PreparedCapture;
import org.wanrep.writeset.capture.WriteSetCapture;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * This site's write-set I/O: per database, one capture (a wal2json slot streamed by one reader) and
 * a small pool of appliers (each with its own replication origin, which the capture skips). Ships
 * what this site executed (RELIABLE multicast) and applies what others shipped.
 *
 * <p>With certified interactive blocks ({@code blocks: certify}) it also captures each prepared block's
 * write set at PREPARE TRANSACTION (a {@link PreparedCapture} on a two-phase test_decoding slot per
 * database), which the block's CERTIFY carries to the others; under symmetric execution that is all it
 * captures (no wal2json slot), and its appliers apply the certified blocks of the other sites.
 *
 * <p>Slots are created when the site starts (for every database there) or, for a database that
 * appears later, before the first transaction this site executes in it; they are dropped when the
 * site stops cleanly. A crashed site leaves its slots, whose WAL retention
 * {@code max_slot_wal_keep_size} bounds.
 */
public final class WriteSetChannel implements WriteSetIo, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(WriteSetChannel.class);
    /** How long a committed transaction may take to show up in the capture before the site gives up. */
    private static final Duration CAPTURE_TIMEOUT = Duration.ofSeconds(60);

    private final String site;
    private final BackendTarget target;
    private final int appliersPerDatabase;
    private final Map<String, WriteSetCapture> captures = new HashMap<>();
    /** Read without the monitor (see {@link #preparedWriteSet}): creating a slot waits for open transactions. */
    private final Map<String, PreparedCapture> preparedCaptures = new java.util.concurrent.ConcurrentHashMap<>();
    /** Whether committed transactions are captured (write-set policies) and prepared ones (certified blocks). */
    private final boolean capturesCommitted, capturesPrepared;
    private final Map<String, BlockingQueue<Applier>> appliers = new HashMap<>();
    private final List<Applier> allAppliers = new ArrayList<>();
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private volatile Gcs gcs;
    private boolean closed;   // guarded by this: a stopped site starts nothing again
    private volatile Consumer<String> fatal = reason -> LOG.error("{}", reason);

    private record Applier(Connection connection, WriteSetApplier applier, String origin) {}

    public WriteSetChannel(String site, BackendTarget target, int appliersPerDatabase) {
        this(site, target, appliersPerDatabase, true, false);
    }

    /**
     * {@code committed}: captures committed transactions (write-set policies); {@code prepared}: captures
     * certified blocks at PREPARE TRANSACTION (see {@link #preparedWriteSet}).
     */
    public WriteSetChannel(String site, BackendTarget target, int appliersPerDatabase, boolean committed, boolean prepared) {
        this.site = site;
        this.target = target;
        this.appliersPerDatabase = appliersPerDatabase;
        this.capturesCommitted = committed;
        this.capturesPrepared = prepared;
    }

    public void attach(Gcs g) { this.gcs = g; }

    /** Called when a write set committed here cannot be shipped, or the capture fails: the site must stop. */
    public void onFatal(Consumer<String> f) { this.fatal = f; }

    /** Starts capture for every database the replica has (call before the site takes part in the group). */
    public void startAll() throws SQLException {
        for (String db : databases()) capture(db);
    }

    /**
     * Makes sure {@code database} is captured (slots included), as configured: before a transaction that
     * needs it has a transaction id (a new slot waits for the transactions open when it is made).
     */
    public void capture(String database) {
        if (capturesCommitted) committedCapture(database);
        if (capturesPrepared) preparedCapture(database);
    }

    /** The capture of {@code database}'s committed transactions, created (slot included) if needed. */
    private synchronized WriteSetCapture committedCapture(String database) {
        if (closed) throw new IllegalStateException("site " + site + " is stopped");
        WriteSetCapture c = captures.get(database);
        if (c != null) return c;
        String slot = slotName(site, database);
        try {
            try (Connection conn = connect(database)) {
                // a slot left by an earlier run of this site would replay transactions nobody waits for
                WriteSetCapture.dropSlot(conn, slot);
                WriteSetCapture.createSlot(conn, slot);
            }
            WriteSetCapture.Config cfg = WriteSetCapture.config(jdbcUrl(database), target.user(), slot).tagPrefix(WriteSetSql.TAG_PREFIX);
            if (!target.password().isEmpty()) cfg.property("password", target.password());
            c = WriteSetCapture.start(cfg);
        } catch (SQLException e) {
            throw new IllegalStateException("site " + site + ": cannot capture write sets in database " + database + ": " + e.getMessage(), e);
        }
        captures.put(database, c);
        LOG.info("site {}: capturing write sets of database {} from slot {}", site, database, slot);
        return c;
    }

    /**
     * The capture of {@code database}'s prepared transactions, created (two-phase slot included) if needed. Not under the
     * channel's monitor: the new slot waits for every transaction open at that moment, and one of them may be waiting
     * for its turn to commit behind a write set that an applier (which takes the monitor) has yet to apply.
     */
    private PreparedCapture preparedCapture(String database) {
        synchronized (preparedStart) {
            synchronized (this) {
                if (closed) throw new IllegalStateException("site " + site + " is stopped");
            }
            PreparedCapture c = preparedCaptures.get(database);
            if (c != null) return c;
            String slot = preparedSlotName(site, database);
            try {
                try (Connection conn = connect(database)) {
                    PreparedCapture.dropSlot(conn, slot);   // what an earlier run left: blocks nobody waits for now
                    PreparedCapture.createSlot(conn, slot);
                }
                PreparedCapture.Config cfg = PreparedCapture.config(jdbcUrl(database), target.user(), slot);
                if (!target.password().isEmpty()) cfg.property("password", target.password());
                c = PreparedCapture.start(cfg);
            } catch (SQLException e) {
                throw new IllegalStateException("site " + site + ": cannot capture prepared write sets in database " + database + ": " + e.getMessage(), e);
            }
            synchronized (this) {
                if (closed) {
                    c.close();
                    throw new IllegalStateException("site " + site + " is stopped");
                }
                preparedCaptures.put(database, c);
            }
            LOG.info("site {}: capturing certified blocks' write sets of database {} at PREPARE from slot {}", site, database, slot);
            return c;
        }
    }

    /** Held while a prepared capture is made (see {@link #preparedCapture}). */
    private final Object preparedStart = new Object();

    /**
     * The write set of the transaction prepared as {@code gid} in {@code database}, decoded at its PREPARE TRANSACTION
     * (fails with a {@link org.wanrep.writeset.WriteSetRefusedException} if it cannot travel as a write set). Never
     * creates the capture (a slot made now would wait for this very transaction): fails at once if there is none.
     */
    public CompletableFuture<WriteSet> preparedWriteSet(String database, String gid) {
        PreparedCapture c = preparedCaptures.get(database);
        if (c == null) return CompletableFuture.failedFuture(new IllegalStateException("site " + site + " does not capture prepared transactions of database " + database));
        return c.expect(gid).orTimeout(CAPTURE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Whether a transaction that begins now in {@code database} will have its write set captured at PREPARE. If not,
     * the capture is started in the background (its slot waits for the transactions open then, prepared ones included,
     * which may be resolved only later), for the blocks that begin after it.
     */
    public boolean capturesPreparedNow(String database) {
        if (!capturesPrepared) return false;
        if (preparedCaptures.containsKey(database)) return true;
        startPreparedInBackground(List.of(database));
        return false;
    }

    /** Starts the prepared captures of {@code databases} on a thread of their own (see {@link #capturesPreparedNow}). */
    public void startPreparedInBackground(List<String> databases) {
        if (!capturesPrepared) return;
        synchronized (starting) {
            databases = databases.stream().filter(starting::add).toList();
        }
        if (databases.isEmpty()) return;
        List<String> dbs = databases;
        Thread.ofVirtual().name("wanrep-prepared-capture-" + site).start(() -> {
            for (String db : dbs) {
                try {
                    preparedCapture(db);
                } catch (RuntimeException e) {
                    LOG.warn("site {}: {}; certified blocks of {} replay their statement log", site, e.getMessage(), db);
                } finally {
                    synchronized (starting) { starting.remove(db); }
                }
            }
        });
    }

    /** Databases whose prepared capture a background thread is starting. */
    private final java.util.Set<String> starting = new java.util.HashSet<>();

    /** The databases of the replica that accept connections. */
    public List<String> databases() throws SQLException {
        List<String> dbs = new ArrayList<>();
        try (Connection c = connect("postgres"); Statement st = c.createStatement();
             var rs = st.executeQuery("SELECT datname FROM pg_catalog.pg_database WHERE datallowconn AND NOT datistemplate ORDER BY datname")) {
            while (rs.next()) dbs.add(rs.getString(1));
        }
        return dbs;
    }

    /**
     * Before a state transfer replaces the replica's databases: stops every capture and applier and drops this
     * site's slots (DROP DATABASE refuses a database with a slot; the copy's transactions, committed elsewhere,
     * must never be shipped as this site's). Nothing of this site runs meanwhile. Idempotent (a failed transfer
     * is tried again from another donor).
     */
    public synchronized void suspendForRestore() throws SQLException {
        if (closed) throw new IllegalStateException("site " + site + " is stopped");
        for (WriteSetCapture c : captures.values()) c.close();
        captures.clear();
        for (PreparedCapture c : preparedCaptures.values()) c.close();
        preparedCaptures.clear();
        for (Applier a : allAppliers) {
            try { a.applier().close(); } catch (SQLException ignored) { }
            try { a.connection().close(); } catch (SQLException ignored) { }
        }
        allAppliers.clear();
        appliers.clear();
        // every database's slot of this site, also one an earlier run left on a database this run never captured
        try (Connection c = connect("postgres"); Statement st = c.createStatement()) {
            List<String> slots = new ArrayList<>();
            try (var rs = st.executeQuery("SELECT datname FROM pg_catalog.pg_database")) {
                while (rs.next()) {
                    slots.add(slotName(site, rs.getString(1)));
                    slots.add(preparedSlotName(site, rs.getString(1)));
                }
            }
            for (String slot : slots) dropSlotOnceInactive(c, slot);
        }
    }

    /** After the restore: slots created again (so they start after every restored transaction) and captures restarted. */
    public void resumeAfterRestore() throws SQLException {
        if (capturesCommitted) startAll();
        else startPreparedInBackground(databases());
    }

    /** A closed capture's walsender may take a moment to end: its slot stays active until then. */
    private static void dropSlotOnceInactive(Connection c, String slot) throws SQLException {
        for (int attempt = 0; ; attempt++) {
            try {
                WriteSetCapture.dropSlot(c, slot);
                return;
            } catch (SQLException e) {
                if (!"55006".equals(e.getSQLState()) || attempt >= 100) throw e;   // object_in_use: still active
                try {
                    Thread.sleep(100);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    static String slotName(String site, String database) {
        return ("wanrep_" + site + "_" + database).toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9_]", "_");
    }

    /** The two-phase slot of {@code database}'s prepared transactions ("wanrep2pc_": no site's name makes it a {@link #slotName}). */
    static String preparedSlotName(String site, String database) {
        return ("wanrep2pc_" + site + "_" + database).toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9_]", "_");
    }

    @Override public void ship(Txn t) {
        List<WireMessage> replies = new ArrayList<>();
        if (!t.isOrigin()) {   // the client is at another site: its replies travel with the write set
            replies.addAll(WireTxnExecutor.keptReplies(t));
            if (WireTxnExecutor.commitError(t) != null) replies.add(WireTxnExecutor.commitError(t).toMessage());
        }
        boolean committed = WireTxnExecutor.error(t) == null && WireTxnExecutor.commitError(t) == null;
        if (!committed) {
            multicast(new WriteSetMessage(t.request().id(), gcs.self(), false, replies, null, Map.of()));
            return;
        }
        Map<String, Long> sequences = Map.copyOf(WireTxnExecutor.sequences(t));
        shipCommitted(t.request().id(), t.request().database(), t.captureTag(), replies, sequences);
    }

    /**
     * Ships a transaction committed here once its write set was captured. Returns the future of the
     * multicast (interactive blocks send theirs through the total order themselves: see {@link #captured}).
     */
    private void shipCommitted(org.wanrep.txn.RequestId id, String database, String tag, List<WireMessage> replies, Map<String, Long> sequences) {
        captured(database, tag).whenComplete((ws, e) -> {
            if (e != null) {
                fatal.accept("site " + site + " committed " + id + " but could not capture its write set: " + e.getMessage());
                return;
            }
            multicast(new WriteSetMessage(id, gcs.self(), true, replies, ws, sequences));
        });
    }

    /** The write set of the transaction tagged {@code tag} in {@code database}, once captured. */
    public CompletableFuture<WriteSet> captured(String database, String tag) {
        return committedCapture(database).expect(tag).orTimeout(CAPTURE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void multicast(WriteSetMessage m) {
        try {
            gcs.multicast(WriteSetMessageCodec.encode(m), Delivery.RELIABLE);
        } catch (RuntimeException e) {
            fatal.accept("site " + site + " executed " + m.id() + " for every site but cannot ship its write set: " + e.getMessage());
        }
    }

    @Override public void apply(Txn t, WriteSetMessage m, TxnExecutor.Done done) {
        String db = t.request().database();
        threads.execute(() -> {
            Applier a;
            try {
                a = borrow(db);
            } catch (SQLException | InterruptedException e) {
                LOG.warn("site {}: no applier for {}: {}", site, db, e.toString());
                done.completed(TxnExecutor.Outcome.RETRY);
                return;
            } catch (RuntimeException e) {
                done.completed(TxnExecutor.Outcome.RETRY);
                return;
            }
            boolean broken = false;
            String origin = t.originMember() != null ? t.originMember() : m.id().site();
            try {
                boolean fresh = a.applier().apply(m.writeSet(), new WriteSetApplier.InTransaction() {
                    @Override public boolean before(Connection c) throws SQLException {
                        if (!WriteSetSql.markApplied(c, origin, m.id().seq())) return false;
                        String record = t.recordSql();   // a certified block under symmetric execution: its GSN, as any transaction's
                        if (record != null) try (Statement st = c.createStatement()) { st.execute(record); }
                        return true;
                    }
                    @Override public void after(Connection c) throws SQLException {
                        if (m.sequences().isEmpty()) return;
                        try (Statement st = c.createStatement()) {
                            st.execute(WriteSetSql.setSequences(m.sequences()));
                        }
                    }
                });
                if (!fresh) LOG.info("site {}: the write set of {} (from {}) was applied already; not again", site, m.id(), origin);
                done.completed(TxnExecutor.Outcome.OK);
            } catch (SQLException e) {
                String state = e.getSQLState();
                broken = connectionLost(state);
                LOG.error("site {}: applying the write set of {} failed: {} {}", site, m.id(), state, e.getMessage());
                // a retry is safe: the apply is one transaction, and one that did commit is recognised and skipped
                done.completed(broken || TxnExecutor.transientState(state) ? TxnExecutor.Outcome.RETRY : TxnExecutor.Outcome.ERROR);
            } catch (RuntimeException e) {   // a bug or a malformed write set: never leave the transaction unfinished
                LOG.error("site {}: applying the write set of {} failed: {}", site, m.id(), e.toString(), e);
                done.completed(TxnExecutor.Outcome.ERROR);
            } finally {
                release(db, a, broken);
            }
        });
    }

    /** SQLSTATEs of a connection that failed or was terminated (admin/crash shutdown): not the transaction's fault. */
    static boolean connectionLost(String state) {
        return state == null || state.startsWith("08") || state.equals("57P01") || state.equals("57P02") || state.equals("57P03");
    }

    private Applier borrow(String db) throws SQLException, InterruptedException {
        BlockingQueue<Applier> q;
        synchronized (this) {
            if (closed) throw new SQLException("site " + site + " is stopped", "57P01");
            q = appliers.get(db);
            if (q == null) {
                q = new ArrayBlockingQueue<>(appliersPerDatabase);
                for (int k = 1; k <= appliersPerDatabase; k++) q.add(newApplier(db, k));
                appliers.put(db, q);
            }
        }
        return q.take();
    }

    private void release(String db, Applier a, boolean broken) {
        BlockingQueue<Applier> q;
        synchronized (this) {
            q = appliers.get(db);
            if (closed || q == null) return;
        }
        if (!broken) {
            q.add(a);
            return;
        }
        try { a.connection().close(); } catch (SQLException ignored) { }
        int k = Integer.parseInt(a.origin().substring(a.origin().lastIndexOf('_') + 1));
        for (int attempt = 0; ; attempt++) {
            try {
                q.add(newApplier(db, k));
                return;
            } catch (SQLException e) {
                if (attempt > 20) {
                    fatal.accept("site " + site + " lost its connections to its replica: " + e.getMessage());
                    return;
                }
                try { Thread.sleep(500); } catch (InterruptedException ie) { Thread.currentThread().interrupt(); return; }
            }
        }
    }

    private synchronized Applier newApplier(String db, int k) throws SQLException {
        String origin = slotName(site, db).replaceFirst("^wanrep_", "wanrep_apply_") + "_" + k;
        Connection c = connect(db);
        try {
            WriteSetSql.createAppliedTable(c);
        } catch (SQLException e) {
            try { c.close(); } catch (SQLException ignored) { }
            throw e;
        }
        Applier a = new Applier(c, new WriteSetApplier(c, origin), origin);
        allAppliers.add(a);
        return a;
    }

    private Connection connect(String database) throws SQLException {
        return target.jdbc(database, "wanrep-apply-" + site);
    }

    private String jdbcUrl(String database) {
        return target.jdbcUrl(database);
    }

    /** Stops capture and apply; with {@code dropSlots} (a clean stop) also drops this site's slots and origins. */
    public synchronized void close(boolean dropSlots) {
        if (closed) return;
        closed = true;
        for (WriteSetCapture c : captures.values()) c.close();
        for (PreparedCapture c : preparedCaptures.values()) c.close();
        for (Applier a : allAppliers) {
            try { a.applier().close(); } catch (SQLException ignored) { }
            try { a.connection().close(); } catch (SQLException ignored) { }
        }
        if (dropSlots) {
            java.util.Set<String> dbs = new java.util.TreeSet<>(captures.keySet());
            dbs.addAll(preparedCaptures.keySet());
            for (String db : dbs) {
                try (Connection c = connect(db); Statement st = c.createStatement()) {
                    if (captures.containsKey(db)) WriteSetCapture.dropSlot(c, slotName(site, db));
                    if (preparedCaptures.containsKey(db)) dropSlotOnceInactive(c, preparedSlotName(site, db));
                    for (Applier a : allAppliers) {
                        try { st.execute("SELECT pg_catalog.pg_replication_origin_drop('" + a.origin() + "')"); } catch (SQLException ignored) { }
                    }
                } catch (SQLException e) {
                    LOG.warn("site {}: could not drop the slots of {}: {}", site, db, e.getMessage());
                }
            }
        }
        captures.clear();
        preparedCaptures.clear();
        appliers.clear();
        allAppliers.clear();
        threads.shutdown();
    }

    @Override public void close() { close(true); }
}
