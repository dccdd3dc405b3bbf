package org.wanrep.txn;

import org.wanrep.lock.TableSet;
import org.wanrep.wire.WireMessage;

import java.util.List;
import java.util.Map;

/**
 * What is multicast for one update transaction: enough for any site to take the same locks and run
 * the same work. {@code messages} are self-contained frontend messages (Query, or
 * Parse/Bind/Describe/Execute/Sync with the named statements they use parsed first, COPY data
 * included), run at each site in database {@code database} with the origin session's
 * {@code settings} (TimeZone, DateStyle, search_path...) set locally, so that the same text means
 * the same thing everywhere. {@code timestampMicros} is the origin's transaction time (time
 * functions are rewritten to it) and {@code seed}, when not 0, seeds random() at every site.
 * {@code shipsWriteSet}: under a write-set policy one site executes it and ships its write set (set
 * for DML; DDL and TRUNCATE, which logical decoding does not carry, run at every site).
 * {@code writeSet}: an encoded {@link WriteSetMessage}, for {@link Kind#WRITESET_LOG}, and for {@link Kind#CERTIFY} when
 * the origin captured the block's write set at PREPARE (empty: the others replay its log).
 * {@code changesCatalog}: it runs DDL, after which every site reloads what its classifier knows of the
 * catalog (the origin's analysis travels with it, so no site parses the SQL again).
 * {@code snapshotGsn}: for {@link Kind#CERTIFY} only, the position in the total order that the block's
 * snapshot saw completely (every transaction up to it had committed at its origin before it began).
 * {@code rowPositions}: for {@link Kind#CERTIFY} only, rows (table, {@link TableSet#ROW}, key) that the block locked in
 * PostgreSQL by key before anything else of it touched them, each with a GSN such that every transaction up to it
 * had written all it writes at the origin when the row was locked: the block modified the newest version of the row,
 * so a write of it at or below that GSN is one the block saw (see {@link Certifier}).
 */
public record TxnRequest(RequestId id, Kind kind, TableSet tables, String database, List<WireMessage> messages,
                         long timestampMicros, long seed, Map<String, String> settings, boolean shipsWriteSet, byte[] writeSet,
                         boolean changesCatalog, long snapshotGsn, Map<String, Long> rowPositions) {
    public enum Kind {
        /** An autocommit request: run at every site in lock order. */
        AUTOCOMMIT,
        /** Interactive block, first write: a cluster-wide exclusive lock for the block. */
        EXCLUSIVE,
        /** Interactive block, COMMIT: the block's statement log, re-executed at the other sites. */
        STATEMENT_LOG,
        /** Interactive block ended without commit: the exclusive lock is released, nothing runs. */
        RELEASE,
        /**
         * Interactive block, COMMIT under a write-set policy: the origin committed it and ships its
         * write set ({@link #writeSet}) for the other sites to apply under the block's lock.
         */
        WRITESET_LOG,
        /**
         * Interactive block, COMMIT without a cluster lock: the origin ran it on a snapshot
         * ({@link #snapshotGsn}) and prepared it; every site certifies its read and write set
         * ({@link #tables}) against what was delivered since, alike; if it commits, the others
         * apply its write set ({@link #writeSet}, captured at its origin's PREPARE) or, without one, replay its
         * statement log ({@link #messages}) under its locks, and the origin commits it.
         */
        CERTIFY,
        /**
         * The payload of a change of the configured sites (gcs {@code changeSites}): the total order
         * switched the sites at its GSN; nothing runs, its GSN is done at once.
         */
        SITES
    }

    /**
     * Key in {@link #settings} of the origin client's role (proxy.session_role client): every site runs
     * the request logged in as that role, so privileges refuse it at every site alike. Never a setting
     * name (it starts with a space); absent: the replica user.
     */
    public static final String ROLE = " role";

    /** The role every site runs this request as, or null for the replica user. */
    public String role() { return settings.get(ROLE); }

    /** The bytes of SQL and data it carries (its messages and write set): what a site holds until it finishes it. */
    public long bytes() {
        long n = writeSet == null ? 0 : writeSet.length;
        if (messages != null) for (WireMessage m : messages) n += m.payload().length;
        return n;
    }

    public TxnRequest {
        messages = List.copyOf(messages);
        settings = Map.copyOf(settings);
        writeSet = writeSet == null ? new byte[0] : writeSet;
        rowPositions = Map.copyOf(rowPositions);
    }

    public TxnRequest(RequestId id, Kind kind, TableSet tables, String database, List<WireMessage> messages,
                      long timestampMicros, long seed, Map<String, String> settings, boolean shipsWriteSet, byte[] writeSet,
                      boolean changesCatalog) {
        this(id, kind, tables, database, messages, timestampMicros, seed, settings, shipsWriteSet, writeSet, changesCatalog, 0, Map.of());
    }

    /** A block to certify at every site (see {@link Kind#CERTIFY}), carrying no write set: the others replay its log. */
    public static TxnRequest certify(RequestId id, TableSet readsAndWrites, String database, List<WireMessage> log,
                                     long timestampMicros, long seed, Map<String, String> settings, long snapshotGsn) {
        return certify(id, readsAndWrites, database, log, timestampMicros, seed, settings, snapshotGsn, Map.of(), false, null);
    }

    /**
     * A block to certify carrying {@code writeSet} (an encoded {@link WriteSetMessage}: the rows its origin's capture decoded
     * at PREPARE), which the other sites apply once it certified, or null: they replay its log.
     */
    public static TxnRequest certify(RequestId id, TableSet readsAndWrites, String database, List<WireMessage> log,
                                     long timestampMicros, long seed, Map<String, String> settings, long snapshotGsn,
                                     Map<String, Long> rowPositions, boolean shipsWriteSet, byte[] writeSet) {
        return new TxnRequest(id, Kind.CERTIFY, readsAndWrites, database, log, timestampMicros, seed, settings, shipsWriteSet, writeSet, false,
                snapshotGsn, rowPositions);
    }

    /**
     * For a certified block that this site prepared before it restarted: COMMIT PREPARED of its transaction, in
     * {@code database}, under the block's locks (see {@code exec.WireTxnExecutor#outsideTransaction}).
     */
    public TxnRequest committingPrepared(String gid, String database) {
        return new TxnRequest(id, Kind.STATEMENT_LOG, tables, database, List.of(WireMessage.query("COMMIT PREPARED '" + gid.replace("'", "''") + "'")),
                0, 0, Map.of(), false, null, false, snapshotGsn, rowPositions);
    }

    /** The block's statement log as work to replay (what a {@link Kind#STATEMENT_LOG} carries). */
    public TxnRequest asStatementLog() {
        return new TxnRequest(id, Kind.STATEMENT_LOG, tables, database, messages, timestampMicros, seed, settings, shipsWriteSet, null, changesCatalog, snapshotGsn, rowPositions);
    }

    public TxnRequest(RequestId id, Kind kind, TableSet tables, String database, List<WireMessage> messages,
                      long timestampMicros, long seed, Map<String, String> settings) {
        this(id, kind, tables, database, messages, timestampMicros, seed, settings, false, null, false);
    }

    public TxnRequest(RequestId id, Kind kind, TableSet tables, String database, List<WireMessage> messages,
                      long timestampMicros, long seed, Map<String, String> settings, boolean shipsWriteSet, byte[] writeSet) {
        this(id, kind, tables, database, messages, timestampMicros, seed, settings, shipsWriteSet, writeSet, false);
    }

    /** The same request, marked as executable at one site with its write set shipped (DML only). */
    public TxnRequest shippingWriteSet() {
        return new TxnRequest(id, kind, tables, database, messages, timestampMicros, seed, settings, true, writeSet, changesCatalog, snapshotGsn, rowPositions);
    }

    /** The same request, marked as changing the catalog (DDL): every site reads its catalog again after it. */
    public TxnRequest changingCatalog() {
        return new TxnRequest(id, kind, tables, database, messages, timestampMicros, seed, settings, shipsWriteSet, writeSet, true, snapshotGsn, rowPositions);
    }

    public TxnRequest(RequestId id, Kind kind, TableSet tables, String database, List<WireMessage> messages, long timestampMicros, long seed) {
        this(id, kind, tables, database, messages, timestampMicros, seed, Map.of());
    }
}
