package org.wanrep.writeset.capture;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.wanrep.writeset.KeyCheck;
import org.wanrep.writeset.WriteSet;
import org.wanrep.writeset.WriteSetRefusedException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Captures the write sets of this replica's committed transactions from a logical replication slot
 * (wal2json format-version 2 over pgjdbc's replication protocol) and hands each to whoever waits
 * for its tag. The middleware tags a transaction with
 * {@code SELECT pg_logical_emit_message(true, '<tagPrefix>', '<tag>')} before its COMMIT.
 * <p>
 * Threads: one reader owns the replication connection and only reads, parses and assembles; it never
 * waits on anyone, because pgjdbc sends the status updates that keep the walsender alive from inside
 * read calls. A handover thread completes the futures (dependents of {@link #expect} run there
 * unless they use async stages), looks up tables in the catalog, and then publishes the commit's end
 * LSN, which the reader confirms to the server: a transaction is acknowledged only after hand-over.
 * <p>
 * Delivery is at-least-once: after a reconnect the server resends from the slot's confirmed
 * position; tags already handed over are dropped. Transactions applied by a {@code WriteSetApplier}
 * carry a replication origin and are skipped, so applied write sets are not captured again.
 */
public final class WriteSetCapture implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WriteSetCapture.class);

    /** Settings; {@link #config} gives the defaults. */
    public static final class Config {
        String jdbcUrl;
        Properties properties = new Properties();
        String slotName;
        String tagPrefix = "wanrep";
        long maxTransactionBytes = 64L << 20;
        NumericNullPolicy numericNulls = NumericNullPolicy.NULL_IS_NULL;
        Consumer<WriteSet> untagged = ws -> log.debug("untagged transaction with {} rows ignored", ws.rows().size());
        int unclaimedLimit = 10_000;
        int rememberedTags = 100_000;
        Duration reconnectDelay = Duration.ofMillis(500);
        Duration statusInterval = Duration.ofSeconds(1);
        Consumer<WriteSet> beforeHandOver = ws -> { };

        public Config tagPrefix(String p) { tagPrefix = p; return this; }
        /** Refuse (fail the waiter) a transaction whose change records exceed this many bytes of JSON. */
        public Config maxTransactionBytes(long n) { maxTransactionBytes = n; return this; }
        public Config numericNulls(NumericNullPolicy p) { numericNulls = p; return this; }
        /** Called (on the handover thread) with every non-empty transaction that carries no tag. */
        public Config untaggedListener(Consumer<WriteSet> l) { untagged = l; return this; }
        /** How many write sets that arrive before anyone {@link #expect}s them are kept. */
        public Config unclaimedLimit(int n) { unclaimedLimit = n; return this; }
        public Config reconnectDelay(Duration d) { reconnectDelay = d; return this; }
        public Config statusInterval(Duration d) { statusInterval = d; return this; }
        public Config property(String k, String v) { properties.setProperty(k, v); return this; }
        /** Called on the handover thread before a tagged write set is handed over (tests inject failures here). */
        public Config beforeHandOver(Consumer<WriteSet> hook) { beforeHandOver = hook; return this; }
    }

    public static Config config(String jdbcUrl, String user, String slotName) {
        Config c = new Config();
        c.jdbcUrl = jdbcUrl;
        c.slotName = slotName;
        c.properties.setProperty("user", user);
        return c;
    }

    /** Counters, for metrics and tests. */
    public record Stats(long transactions, long handedOver, long refused, long untagged, long skippedOrigin,
                        long duplicates, long reconnects, String confirmedLsn) {}

    private final Config cfg;
    private final Wal2JsonParser parser;
    private final TransactionAssembler assembler;
    private final SlotReader slot;
    /** Tags waited for and handed over; failed when a hand-over failed unexpectedly: nothing is acknowledged from there on. */
    private final WriteSetWaiters waiters;
    private final AtomicLong transactions = new AtomicLong(), refused = new AtomicLong(),
            untagged = new AtomicLong(), skippedOrigin = new AtomicLong();

    // used on the handover thread only
    private Connection catalog;
    private final Set<String> tablesWithIdentity = new HashSet<>();

    private WriteSetCapture(Config cfg) {
        this.cfg = cfg;
        this.parser = new Wal2JsonParser(cfg.numericNulls, (int) Math.min(Integer.MAX_VALUE, cfg.maxTransactionBytes));
        this.assembler = new TransactionAssembler(cfg.tagPrefix, cfg.maxTransactionBytes);
        this.waiters = new WriteSetWaiters(log, "capture " + cfg.slotName, cfg.unclaimedLimit, cfg.rememberedTags);
        this.slot = new SlotReader(log, "capture", "wanrep-capture", cfg.jdbcUrl, cfg.properties, cfg.slotName,
                streamOptions(cfg.tagPrefix), cfg.statusInterval, cfg.reconnectDelay, assembler::reset, (m, lsn) -> read(m));
    }

    private static Map<String, String> streamOptions(String tagPrefix) {
        return SlotReader.options("format-version", "2", "include-xids", "1", "include-pk", "1", "include-types", "1",
                "include-type-oids", "1", "include-not-null", "1", "include-origin", "1", "include-lsn", "1",
                "include-timestamp", "0", "add-msg-prefixes", tagPrefix);
    }

    /**
     * Starts streaming from the slot (which must exist: {@link #createSlot}). Returns once the
     * replication connection is up, or throws if the first connection fails.
     */
    public static WriteSetCapture start(Config cfg) throws SQLException {
        WriteSetCapture c = new WriteSetCapture(cfg);
        c.slot.start(WriteSetCapture::explainPluginError);
        return c;
    }

    /** A future completed with the write set of the transaction tagged {@code tag}, or failed with why it cannot be shipped. */
    public CompletableFuture<WriteSet> expect(String tag) { return waiters.expect(tag); }

    public boolean isConnected() { return slot.isConnected(); }

    /** Why this capture stopped handing over write sets, or null while it works. */
    public SQLException failure() { return waiters.failure(); }

    public Stats stats() {
        return new Stats(transactions.get(), waiters.handedOver.get(), refused.get(), untagged.get(), skippedOrigin.get(),
                waiters.duplicates.get(), slot.reconnects.get(), slot.publishedLsn());
    }

    // ---------------------------------------------------------------- reader thread

    /** One wal2json record: assembled into its transaction, which goes to the hand-over once complete. */
    private void read(ByteBuffer buf) {
        int len = buf.remaining();
        if (len > cfg.maxTransactionBytes) {
            assembler.tooBig(len);   // refuse without parsing (or holding) a huge record
            return;
        }
        TransactionAssembler.Assembled a;
        try {
            a = assembler.accept(parser.parse(buf.array(), buf.arrayOffset() + buf.position(), len), len);
        } catch (IOException e) {
            log.error("capture {}: unreadable wal2json record: {}", cfg.slotName, e.toString());
            assembler.poison(e.getMessage());
            return;
        }
        if (a != null) {
            transactions.incrementAndGet();
            slot.handOver(() -> handOver(a));
        }
    }

    // ---------------------------------------------------------------- handover thread

    /**
     * Hands one transaction over, then publishes its end LSN for the reader to confirm. A hand-over
     * that fails unexpectedly is a failure the capture cannot recover from: the waiter gets it, and
     * neither this transaction nor any later one is acknowledged (confirming a later LSN would
     * confirm this one too), so the slot still holds them for whoever takes over.
     */
    private void handOver(TransactionAssembler.Assembled a) {
        if (waiters.failure() != null) {
            if (a.tag() != null) waiters.deliver(a.tag(), a.tag(), null, waiters.failure());
            return;
        }
        try {
            if (a.origin() != 0) {
                skippedOrigin.incrementAndGet();   // applied by a WriteSetApplier: not ours to ship
                return;
            }
            WriteSetRefusedException refusal = a.refusal();
            if (refusal == null && !a.tablesWithoutPk().isEmpty()) refusal = checkKeyless(a.tablesWithoutPk());
            if (a.tag() == null) {
                if (refusal != null) log.warn("capture {}: untagged transaction {} not shippable: {}", cfg.slotName, a.xid(), refusal.getMessage());
                else if (!a.rows().isEmpty()) {
                    untagged.incrementAndGet();
                    cfg.untagged.accept(new WriteSet("", a.rows()));
                }
                return;
            }
            if (refusal != null) refused.incrementAndGet();
            WriteSet ws = refusal == null ? new WriteSet(a.tag(), a.rows()) : null;
            if (ws != null) cfg.beforeHandOver.accept(ws);
            waiters.deliver(a.tag(), a.tag(), ws, refusal);
        } catch (RuntimeException e) {
            log.error("capture {}: hand-over of transaction {} failed; the capture stops handing over", cfg.slotName, a.xid(), e);
            waiters.fail(new SQLException("write-set capture " + cfg.slotName + " failed handing over transaction " + a.xid() + ": " + e, "XX000", e));
            if (a.tag() != null) waiters.deliver(a.tag(), a.tag(), null, waiters.failure());
            return;
        }
        slot.mayConfirm(a.endLsn());
    }

    /** Tables a transaction wrote that have no primary key: shippable only under REPLICA IDENTITY FULL or USING INDEX. */
    private WriteSetRefusedException checkKeyless(Set<String> tables) {
        List<String> unknown = new ArrayList<>();
        for (String t : tables) if (!tablesWithIdentity.contains(t)) unknown.add(t);
        if (unknown.isEmpty()) return null;
        try {
            if (catalog == null || catalog.isClosed()) {
                Properties p = new Properties();
                p.putAll(cfg.properties);
                catalog = DriverManager.getConnection(cfg.jdbcUrl, p);
            }
            List<String> missing = new ArrayList<>();
            KeyCheck.identities(catalog, unknown).forEach((t, id) -> {
                if (id == KeyCheck.Identity.NONE) missing.add(t);
                else tablesWithIdentity.add(t);
            });
            return missing.isEmpty() ? null : KeyCheck.noIdentity(missing);
        } catch (SQLException e) {
            // the table may be gone already; refusing is the safe side
            closeCatalog();
            return new WriteSetRefusedException("cannot verify the replica identity of " + unknown + ": " + e.getMessage(),
                    WriteSetRefusedException.NO_IDENTITY);
        }
    }

    private void closeCatalog() {
        try { if (catalog != null) catalog.close(); } catch (SQLException ignored) { }
        catalog = null;
    }

    @Override public void close() {
        slot.close();
        closeCatalog();   // the handover thread has ended: no race
        waiters.close(new SQLException("write-set capture " + cfg.slotName + " closed", "57P01"));
    }

    // ---------------------------------------------------------------- slots

    /**
     * Creates the logical slot for wal2json on the database of {@code c} (a normal connection).
     * Returns false if it already exists. Changes committed before are never captured.
     */
    public static boolean createSlot(Connection c, String slotName) throws SQLException {
        try {
            return SlotReader.create(c, slotName, "wal2json", false);
        } catch (SQLException e) {
            throw explainPluginError(e);
        }
    }

    /** Drops the slot (its pinned WAL goes with it). Returns false if there was none. */
    public static boolean dropSlot(Connection c, String slotName) throws SQLException {
        return SlotReader.drop(c, slotName);
    }

    private static SQLException explainPluginError(SQLException e) {
        String m = String.valueOf(e.getMessage());
        if ("58P01".equals(e.getSQLState()) || m.contains("wal2json") && (m.contains("could not access file") || m.contains("output_plugin_libraries")))
            return new SQLException("the wal2json output plugin is not available on this PostgreSQL server (install"
                    + " postgresql-15-wal2json; on 15.20+ also list it in output_plugin_libraries): " + m, e.getSQLState(), e);
        return e;
    }
}
