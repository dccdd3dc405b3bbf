package org.wanrep.writeset.capture;

import org.postgresql.replication.LogSequenceNumber;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.wanrep.writeset.RowChange;
import org.wanrep.writeset.WriteSet;
import org.wanrep.writeset.WriteSetRefusedException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Captures the write set of each prepared transaction AT {@code PREPARE TRANSACTION}, from a logical
 * slot of the {@code test_decoding} plugin created with two-phase decoding, and hands it to whoever
 * waits for its gid. (wal2json 2.5 cannot decode PREPARE; pgoutput needs a publication, and a FOR ALL
 * TABLES publication makes UPDATE/DELETE of tables without replica identity fail at the origin.)
 * <p>
 * Only prepared transactions are handed over; ordinary transactions and {@code COMMIT PREPARED} /
 * {@code ROLLBACK PREPARED} are read and discarded (their bytes are counted, their rows not kept).
 * Column types and identity keys come from the catalog ({@link PreparedRows}), looked up per prepared
 * transaction: its tables cannot be altered while it is prepared.
 * <p>
 * Threads, as {@link WriteSetCapture}: one reader owns the replication connection and only reads,
 * parses and assembles; a handover thread looks up the catalog on its own ordinary connection,
 * completes the futures, and then publishes the LSN the reader confirms to the server, so the slot is
 * confirmed only past what was handed over or discarded.
 * <p>
 * Delivery is at-least-once: after a reconnect the server resends from the slot's confirmed position;
 * a prepare handed over already (same gid, same LSN) is dropped. Transactions carrying a replication
 * origin (a {@code WriteSetApplier}'s) are filtered out by the plugin ({@code only-local}).
 * <p>
 * A prepared transaction that wrote nothing decodable (no row, no logical message, e.g. only
 * {@code SELECT txid_current()}) produces no output at all, so its {@link #expect} never completes:
 * callers must bound their wait, or emit a transactional logical message before PREPARE.
 */
public final class PreparedCapture implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PreparedCapture.class);

    /** Settings; {@link #config} gives the defaults. */
    public static final class Config {
        String jdbcUrl;
        Properties properties = new Properties();
        String slotName;
        long maxTransactionBytes = 64L << 20;
        int unclaimedLimit = 10_000;
        int rememberedGids = 100_000;
        Duration reconnectDelay = Duration.ofMillis(500);
        Duration statusInterval = Duration.ofSeconds(1);

        /** Refuse (fail the waiter, 54000) a prepared transaction whose change messages exceed this many bytes. */
        public Config maxTransactionBytes(long n) { maxTransactionBytes = n; return this; }
        /** How many write sets that arrive before anyone {@link #expect}s them are kept (oldest dropped). */
        public Config unclaimedLimit(int n) { unclaimedLimit = n; return this; }
        public Config reconnectDelay(Duration d) { reconnectDelay = d; return this; }
        public Config statusInterval(Duration d) { statusInterval = d; return this; }
        public Config property(String k, String v) { properties.setProperty(k, v); return this; }
    }

    public static Config config(String jdbcUrl, String user, String slotName) {
        Config c = new Config();
        c.jdbcUrl = jdbcUrl;
        c.slotName = slotName;
        c.properties.setProperty("user", user);
        return c;
    }

    private final Config cfg;
    private final PreparedAssembler assembler;
    private final SlotReader slot;
    /** Gids waited for and handed over (prepares told apart as gid@lsn); failed when a hand-over failed unexpectedly. */
    private final WriteSetWaiters waiters;
    final AtomicLong prepares = new AtomicLong(), refused = new AtomicLong(), discarded = new AtomicLong(), lookups = new AtomicLong();
    final AtomicLong handedOver, duplicates, reconnects;   // counted by the waiters and the slot reader

    // used on the handover thread only (handed to it by start())
    private Connection catalog;

    private PreparedCapture(Config cfg) {
        this.cfg = cfg;
        this.assembler = new PreparedAssembler(cfg.maxTransactionBytes);
        this.waiters = new WriteSetWaiters(log, "prepared capture " + cfg.slotName, cfg.unclaimedLimit, cfg.rememberedGids);
        this.slot = new SlotReader(log, "prepared capture", "wanrep-prepared", cfg.jdbcUrl, cfg.properties, cfg.slotName,
                STREAM_OPTIONS, cfg.statusInterval, cfg.reconnectDelay, assembler::reset, this::read);
        this.handedOver = waiters.handedOver;
        this.duplicates = waiters.duplicates;
        this.reconnects = slot.reconnects;
    }

    /**
     * Two-phase decoding is a property of the slot (created with two_phase = true); test_decoding in
     * PostgreSQL 15 takes no stream option for it. skip-empty-xacts is OFF on purpose: with it on,
     * test_decoding 15 prints neither BEGIN nor PREPARE for a prepared transaction whose only output is
     * a logical message or whose changes were catalog-only, so its waiter would never hear of it.
     */
    private static final Map<String, String> STREAM_OPTIONS = SlotReader.options(
            "include-xids", "0", "include-timestamp", "0", "skip-empty-xacts", "0", "only-local", "1");

    /**
     * Connects (catalog connection and replication stream; the slot must exist: {@link #createSlot}) and
     * starts the reader. Throws if the first connection fails.
     */
    public static PreparedCapture start(Config cfg) throws SQLException {
        PreparedCapture c = new PreparedCapture(cfg);
        Connection cat = c.openCatalog();
        c.catalog = cat;   // before the reader starts: the executor's first task sees it (Executor submission happens-before)
        try {
            c.slot.start(e -> e);
        } catch (SQLException e) {
            cat.close();
            throw e;
        }
        return c;
    }

    /**
     * Completes with the rows the transaction prepared as {@code gid} wrote (WriteSet tag = gid), or fails
     * with {@link WriteSetRefusedException} when they cannot be shipped faithfully.
     */
    public CompletableFuture<WriteSet> expect(String gid) { return waiters.expect(gid); }

    public boolean isConnected() { return slot.isConnected(); }

    /** Why this capture stopped handing over write sets, or null while it works. */
    public SQLException failure() { return waiters.failure(); }

    /** The LSN last published for confirmation, or null. */
    String confirmedLsn() { return slot.publishedLsn(); }

    // ---------------------------------------------------------------- reader thread

    /** Prepares (and what follows them) given to the hand-over thread and not yet through it: LSNs are confirmed in order. */
    private final AtomicInteger inHandOver = new AtomicInteger();

    /** One test_decoding message: assembled, and what it ends goes to the hand-over (or is confirmed at once). */
    private void read(ByteBuffer buf, Supplier<LogSequenceNumber> lsn) {
        int len = buf.remaining();
        PreparedAssembler.Done d;
        if (len > cfg.maxTransactionBytes && assembler.isOpen() && !startsWithAscii(buf, "PREPARE TRANSACTION ")) {
            assembler.tooBig(len);   // refuse without decoding (or holding) a huge change
            return;
        }
        String line = new String(buf.array(), buf.arrayOffset() + buf.position(), len, StandardCharsets.UTF_8);
        try {
            TestDecodingParser.Event ev = TestDecodingParser.parse(line);
            // only what ends something has an LSN to confirm (formatting one for every row cost more than parsing it)
            boolean ends = !(ev instanceof TestDecodingParser.Change || ev instanceof TestDecodingParser.Begin
                    || ev instanceof TestDecodingParser.Message || ev instanceof TestDecodingParser.Truncate);
            d = assembler.accept(ev, len, ends ? lsn.get().asString() : null);
        } catch (IOException e) {
            log.error("prepared capture {}: unreadable test_decoding message: {}", cfg.slotName, e.getMessage());
            assembler.poison(e.getMessage());
            return;
        }
        if (d == null) return;
        if (d.isPrepare()) prepares.incrementAndGet();
        if (!d.isPrepare() && !d.rowless() && inHandOver.get() == 0) {
            // an ordinary transaction with nothing before it in the hand-over: confirmed from here, without
            // waking the hand-over thread once per transaction of the replica
            discarded.incrementAndGet();
            if (waiters.failure() == null) slot.mayConfirm(d.lsn());
            return;
        }
        inHandOver.incrementAndGet();
        slot.handOver(() -> {
            try {
                handOver(d);
            } finally {
                inHandOver.decrementAndGet();
            }
        });
    }

    private static boolean startsWithAscii(ByteBuffer buf, String prefix) {
        if (buf.remaining() < prefix.length()) return false;
        for (int k = 0; k < prefix.length(); k++) if (buf.get(buf.position() + k) != prefix.charAt(k)) return false;
        return true;
    }

    // ---------------------------------------------------------------- handover thread

    /**
     * Hands one prepared transaction over (or just passes a discarded one), then publishes its LSN for
     * the reader to confirm. A hand-over that fails unexpectedly stops the capture: the waiter gets the
     * failure, and neither this nor any later LSN is confirmed.
     */
    private void handOver(PreparedAssembler.Done d) {
        if (waiters.failure() != null) {
            if (d.isPrepare()) deliver(d, null, waiters.failure());
            return;
        }
        try {
            if (d.isPrepare()) {
                WriteSet ws = null;
                SQLException refusal = d.refusal();
                if (refusal == null) {
                    try {
                        ws = new WriteSet(d.gid(), rows(d));
                    } catch (WriteSetRefusedException e) {
                        refusal = e;
                    }
                }
                if (refusal != null) refused.incrementAndGet();
                deliver(d, ws, refusal);
            } else {
                // a transaction that printed no row may have changed the catalog (test_decoding shows no DDL): the
                // descriptions kept of tables are read again
                if (d.rowless()) tables.clear();
                discarded.incrementAndGet();
            }
        } catch (RuntimeException e) {
            log.error("prepared capture {}: hand-over of {} failed; the capture stops handing over", cfg.slotName, d.gid(), e);
            waiters.fail(new SQLException("prepared-transaction capture " + cfg.slotName + " failed handing over " + d.gid() + ": " + e, "XX000", e));
            if (d.isPrepare()) deliver(d, null, waiters.failure());
            return;
        }
        slot.mayConfirm(d.lsn());
    }

    /**
     * Descriptions of tables read from the catalog, kept while the printed rows fit them ({@link PreparedRows#describes}):
     * a lookup per prepared transaction cost ~200 us of the server's CPU. Hand-over thread only.
     */
    private final LinkedHashMap<PreparedRows.Name, PreparedRows.Table> tables = new LinkedHashMap<>(64, 0.75f, true) {
        @Override protected boolean removeEldestEntry(Map.Entry<PreparedRows.Name, PreparedRows.Table> e) { return size() > 10_000; }
    };

    /** The descriptions of the tables {@code changes} write: kept ones that still fit, the others read now. */
    private Map<PreparedRows.Name, PreparedRows.Table> describe(List<TestDecodingParser.Change> changes) throws SQLException {
        List<TestDecodingParser.Change> unknown = new ArrayList<>();
        Set<PreparedRows.Name> stale = new HashSet<>();
        for (TestDecodingParser.Change ch : changes) {
            PreparedRows.Name n = new PreparedRows.Name(ch.schema(), ch.table());
            PreparedRows.Table t = tables.get(n);
            if (t == null || stale.contains(n) || !PreparedRows.describes(t, ch)) {
                if (stale.add(n)) unknown.add(ch);
            }
        }
        if (!unknown.isEmpty()) {
            for (PreparedRows.Name n : stale) tables.remove(n);
            lookups.incrementAndGet();
            tables.putAll(PreparedRows.lookup(catalog, unknown));
        }
        Map<PreparedRows.Name, PreparedRows.Table> out = new HashMap<>();
        for (TestDecodingParser.Change ch : changes) {
            PreparedRows.Name n = new PreparedRows.Name(ch.schema(), ch.table());
            PreparedRows.Table t = tables.get(n);
            if (t != null) out.put(n, t);
        }
        return out;
    }

    /** Catalog lookup (reconnecting once if the connection broke) and conversion. */
    private List<RowChange> rows(PreparedAssembler.Done d) throws WriteSetRefusedException {
        if (d.changes().isEmpty()) return List.of();
        SQLException last = null;
        for (int attempt = 0; attempt < 2; attempt++) {
            try {
                if (catalog == null || catalog.isClosed()) catalog = openCatalog();
                return PreparedRows.rows(d.changes(), describe(d.changes()));
            } catch (WriteSetRefusedException e) {
                throw e;
            } catch (SQLException e) {
                last = e;
                closeCatalog();
            }
        }
        throw new WriteSetRefusedException("cannot read the catalog for prepared transaction " + d.gid() + ": " + last.getMessage(),
                last.getSQLState() == null ? "XX000" : last.getSQLState());
    }

    private Connection openCatalog() throws SQLException {
        Properties p = new Properties();
        p.putAll(cfg.properties);
        Connection c = DriverManager.getConnection(cfg.jdbcUrl, p);
        try (Statement st = c.createStatement()) {
            // every type outside pg_catalog comes schema-qualified from format_type: the applier's search_path does not matter
            st.execute("SET search_path = pg_catalog");
            try (ResultSet rs = st.executeQuery("SELECT pg_catalog.pg_encoding_to_char(encoding) FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database()")) {
                rs.next();
                if (!"UTF8".equals(rs.getString(1))) {
                    c.close();
                    throw new SQLException("prepared-transaction capture needs a UTF8 database (test_decoding writes the database encoding), not "
                            + rs.getString(1), "0A000");
                }
            }
        }
        return c;
    }

    private void closeCatalog() {
        try { if (catalog != null) catalog.close(); } catch (SQLException ignored) { }
        catalog = null;
    }

    private void deliver(PreparedAssembler.Done d, WriteSet ws, SQLException refusal) {
        // the prepare record's LSN tells a resend (same LSN) from a later transaction reusing the gid
        waiters.deliver(d.gid(), d.gid() + "@" + d.lsn(), ws, refusal);
    }

    @Override public void close() {
        slot.close();
        closeCatalog();   // the handover thread has ended: no race
        waiters.close(new SQLException("prepared-transaction capture " + cfg.slotName + " closed", "57P01"));
    }

    // ---------------------------------------------------------------- slots

    /**
     * Creates a test_decoding slot with two-phase decoding on the database of {@code c} (a normal
     * connection). Returns false if a slot of that name exists already. Changes committed before are never captured.
     */
    public static boolean createSlot(Connection c, String slot) throws SQLException {
        try {
            return SlotReader.create(c, slot, "test_decoding", true);
        } catch (SQLException e) {
            if ("42710".equals(e.getSQLState())) return false;   // created meanwhile
            throw e;
        }
    }

    /** Drops the slot (its pinned WAL goes with it). Returns false if there was none. */
    public static boolean dropSlot(Connection c, String slot) throws SQLException {
        return SlotReader.drop(c, slot);
    }
}
