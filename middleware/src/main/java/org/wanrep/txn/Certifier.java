package org.wanrep.txn;

import org.wanrep.lock.LockMode;
import org.wanrep.lock.TableSet;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Map;

/**
 * Certification of interactive blocks (pure, no I/O; called in delivery order by the engine). A block
 * ran at its origin on a snapshot that saw every transaction up to GSN {@code snapshotGsn}; it commits
 * only if no transaction delivered after that position and before it wrote anything it read or wrote
 * (write-write and read-write conflicts: 1-copy-serializable, not merely snapshot isolation), at the
 * granularity both recorded: rows where both pinned the table's rows by key, else the table, else
 * everything ({@link TableSet#all()}). Every site feeds it the same deliveries in the same order, so
 * every site decides alike.
 *
 * <p>A row the block locked in PostgreSQL by key before anything else of it touched the row (an UPDATE or DELETE by key
 * that modified it, under read committed) may carry a later position than the snapshot: a GSN g such that every
 * transaction up to g had written all it writes at the origin when the block locked the row. PostgreSQL's update
 * modifies the newest committed version, and a transaction that wrote the row and had finished writing must have
 * committed before the block could lock it; so a write of that row at or below g is one the block saw, and only
 * writes of it after g conflict. (A writer after g that had not finished writing either committed first, and counts
 * though seen, or waits for the block: certification then aborts the block and breaks that wait.)
 *
 * <p>The window of recent deliveries is bounded: a block whose snapshot is older than the oldest
 * delivery still kept is aborted (deterministically, since the window's contents depend only on the
 * delivery sequence).
 */
public final class Certifier {
    /** The outcome: commit, or abort with a reason for the logs. */
    public record Decision(boolean commit, String reason) {
        static final Decision COMMIT = new Decision(true, "no conflict");
    }

    /**
     * What a delivery in the window wrote, all that certification asks of it: the tables, interned, and for each
     * table written by key only ({@code keys[i]} not null) the sorted hashes of those keys. A tenth of its lock set's
     * memory, kept for {@code capacity} deliveries. Two keys of one hash conflict: an abort more, never a conflict
     * missed; so does a table written by more than {@link #MAX_KEYS} keys, kept as written whole.
     */
    private record Written(long gsn, boolean all, String[] tables, long[][] keys) {}

    private static final String[] NO_TABLES = {};
    private static final long[][] NO_KEYS = {};

    /** The most written keys of one table a delivery keeps in the window; beyond, it wrote the whole table. */
    static final int MAX_KEYS = 256;

    private final int capacity;
    private final ArrayDeque<Written> window = new ArrayDeque<>();
    /** Every delivery with a GSN above this is in the window (or wrote nothing). */
    private long horizon;

    /** The GSN before the first delivery this certifier saw: what was delivered up to it is unknown here (-1: none yet). */
    private long knownAfter = -1;

    /** The highest GSN seen (-1: none). */
    private long lastSeen = -1;

    /**
     * Every ordered delivery, recorded or not: the first one fixes where this certifier's knowledge starts, and so does
     * one after a gap (a state transfer skipped what came between: its writes are not in the window).
     */
    public void seen(long gsn) {
        if (knownAfter < 0 || gsn > lastSeen + 1) knownAfter = Math.max(knownAfter, gsn - 1);
        lastSeen = Math.max(lastSeen, gsn);
    }

    /** What was delivered up to {@code gsn} is not known here (a block whose outcome could not be decided): no decision before it. */
    public void unknownThrough(long gsn) {
        knownAfter = Math.max(knownAfter, gsn);
        lastSeen = Math.max(lastSeen, gsn);
    }

    /** The highest GSN this certifier saw (-1: none). */
    public long lastSeen() { return lastSeen; }

    public int capacity() { return capacity; }

    public Certifier(int capacity) {
        if (capacity < 1) throw new IllegalArgumentException("certification window must hold at least one transaction");
        this.capacity = capacity;
    }

    /** A transaction delivered at {@code gsn} that may write {@code tables} (its lock set; read-only ones need not be recorded). */
    public void delivered(long gsn, TableSet tables) {
        seen(gsn);
        if (!tables.all() && tables.writes().isEmpty()) return;
        window.addLast(written(gsn, tables));
        while (window.size() > capacity) horizon = window.removeFirst().gsn();
    }

    /**
     * Certifies a block delivered at {@code gsn} that read and wrote {@code block} on a snapshot
     * position {@code snapshotGsn}; a block that commits is recorded as a delivery in turn. Null when this
     * certifier started after the snapshot and so cannot know what came between (the caller must not decide).
     */
    public Decision certify(long gsn, long snapshotGsn, TableSet block) { return certify(gsn, snapshotGsn, block, Map.of()); }

    /**
     * As {@link #certify(long, long, TableSet)}, with the positions of the rows the block locked first thing ({@code
     * rowPositions}: table, {@link TableSet#ROW}, key to GSN; see the class comment): a later write of such a row counts
     * only if delivered after its position.
     */
    public Decision certify(long gsn, long snapshotGsn, TableSet block, Map<String, Long> rowPositions) {
        seen(gsn);
        if (snapshotGsn < horizon)
            return new Decision(false, "its snapshot (GSN " + snapshotGsn + ") is older than the certification window (GSN " + horizon + ")");
        // a site that started (or rejoined) after the snapshot lacks what came between: no decision (null)
        if (snapshotGsn < knownAfter) return null;
        // newest first: a conflict is usually recent
        for (var it = window.descendingIterator(); it.hasNext(); ) {
            Written e = it.next();
            if (e.gsn() >= gsn) continue;   // only what came between its snapshot and its own delivery counts
            if (e.gsn() <= snapshotGsn) break;
            String c = conflict(e, block, rowPositions);
            if (c != null) return new Decision(false, c + " by GSN " + e.gsn() + " after its snapshot (GSN " + snapshotGsn + ")");
        }
        delivered(gsn, block);
        return Decision.COMMIT;
    }

    private static Written written(long gsn, TableSet s) {
        if (s.all()) return new Written(gsn, true, NO_TABLES, NO_KEYS);
        String[] tables = new String[s.writes().size()];
        long[][] keys = new long[tables.length][];
        int i = 0;
        for (String t : s.writes()) {
            tables[i] = t.intern();   // the same few names in every delivery: one copy of each
            Map<String, LockMode> rows = s.rows().get(t);
            if (rows != null) {
                long[] k = new long[rows.size()];
                int n = 0;
                for (var r : rows.entrySet()) if (r.getValue() == LockMode.WRITE) k[n++] = hash(r.getKey());
                if (n <= MAX_KEYS) {
                    keys[i] = Arrays.copyOf(k, n);
                    Arrays.sort(keys[i]);
                }
            }
            i++;
        }
        return new Written(gsn, false, tables, keys);
    }

    /** A key's 64-bit hash (FNV-1a over its chars, then mixed): the same at every site, as certification must be. */
    static long hash(String key) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < key.length(); i++) {
            h ^= key.charAt(i);
            h *= 0x100000001b3L;
        }
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        return h;
    }

    /**
     * What of {@code block}'s reads or writes {@code later} (delivered after the block's snapshot) wrote, or null.
     * Row-level only where both sides pinned the table's rows; a row whose position in {@code rowPositions} is at
     * least the later delivery's GSN was seen.
     */
    private static String conflict(Written later, TableSet block, Map<String, Long> rowPositions) {
        if (later.all()) return "a write of every table";
        if (block.all()) return "a write (of " + Arrays.toString(later.tables()) + ") while the block reached every table";
        for (int i = 0; i < later.tables().length; i++) {
            String t = later.tables()[i];
            if (!touches(block, t)) continue;
            long[] laterKeys = later.keys()[i];
            Map<String, LockMode> blockRows = block.rows().get(t);
            if (laterKeys == null || blockRows == null) return "a write of table " + t;
            for (String k : blockRows.keySet())
                if (Arrays.binarySearch(laterKeys, hash(k)) >= 0
                        && rowPositions.getOrDefault(t + TableSet.ROW + k, Long.MIN_VALUE) < later.gsn())
                    return "a write of " + t + " row " + k.replace(TableSet.ROW, '|');
        }
        return null;
    }

    private static boolean touches(TableSet s, String table) {
        return s.reads().contains(table) || s.writes().contains(table) || s.rows().containsKey(table);
    }

    /** Deliveries kept (diagnostics). */
    public int size() { return window.size(); }
}
