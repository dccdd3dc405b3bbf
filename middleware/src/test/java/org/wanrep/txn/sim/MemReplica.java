package org.wanrep.txn.sim;

import org.wanrep.txn.RequestId;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * A site's replica in memory: keys {@code table.n} to longs (absent = 0), written by tiny statements
 * whose effect is a deterministic function of the replica, some of them order-sensitive so that two
 * sites applying the same transactions in different orders end different:
 * <ul>
 *   <li>{@code add K D}: K += D;
 *   <li>{@code app K X}: K = K * 31 + X (an append: order shows);
 *   <li>{@code cpy K S}: K = S + 1 (reads another key, maybe another table);
 *   <li>{@code sub K D}: K -= D, refused (a deterministic ERROR, like a check constraint) if K would go below 0;
 *   <li>{@code dfr K}: a deferred check at COMMIT: the commit fails (deterministically) if K ends divisible by 7.
 * </ul>
 * It also records which transactions it committed, in order, and per table a version that every
 * commit writing the table bumps (a commit checks that nothing it read changed since it ran).
 */
final class MemReplica {
    final TreeMap<String, Long> data = new TreeMap<>();
    final Map<String, Long> versions = new HashMap<>();
    final LinkedHashSet<RequestId> applied = new LinkedHashSet<>();
    /** The engine's history marker (ReplicationEngine.HistoryMarker): on the disk, so a restart finds it. */
    boolean history;

    MemReplica() {}

    /** A copy: what a restarted site finds on its disk. */
    MemReplica(MemReplica other) {
        data.putAll(other.data);
        versions.putAll(other.versions);
        applied.addAll(other.applied);
        history = other.history;
    }

    long get(String key) { return data.getOrDefault(key, 0L); }

    static String tableOf(String key) { return key.substring(0, key.indexOf('.')); }

    /** Versions of the given tables now. */
    Map<String, Long> versionsOf(Set<String> tables) {
        Map<String, Long> v = new HashMap<>();
        for (String t : tables) v.put(t, versions.getOrDefault(t, 0L));
        return v;
    }

    /** Tables a statement list reads or writes. */
    static Set<String> tables(List<String> ops) {
        Set<String> s = new java.util.TreeSet<>();
        for (String op : ops) {
            String[] w = op.split(" ");
            s.add(tableOf(w[1]));
            if (w[0].equals("cpy")) s.add(tableOf(w[2]));
        }
        return s;
    }

    /**
     * Runs the statements over {@code read} (the replica, or a block's snapshot), buffering into
     * {@code writes}; returns the error of the first refused statement, or null.
     */
    static String run(List<String> ops, Function<String, Long> read, Map<String, Long> writes) {
        for (String op : ops) {
            String[] w = op.split(" ");
            String k = w[1];
            long v = writes.containsKey(k) ? writes.get(k) : read.apply(k);
            switch (w[0]) {
                case "add" -> writes.put(k, v + Long.parseLong(w[2]));
                case "app" -> writes.put(k, v * 31 + Long.parseLong(w[2]));
                case "cpy" -> {
                    String s = w[2];
                    writes.put(k, (writes.containsKey(s) ? writes.get(s) : read.apply(s)) + 1);
                }
                case "sub" -> {
                    long d = Long.parseLong(w[2]);
                    if (v < d) return "23514: " + k + " = " + v + " cannot go below 0 by " + d;
                    writes.put(k, v - d);
                }
                case "dfr" -> { }
                default -> throw new IllegalArgumentException("unknown statement " + op);
            }
        }
        return null;
    }

    /** The deferred checks at COMMIT, over the state the transaction would leave. */
    static String deferred(List<String> ops, Function<String, Long> read, Map<String, Long> writes) {
        for (String op : ops) {
            String[] w = op.split(" ");
            if (!w[0].equals("dfr")) continue;
            long v = writes.containsKey(w[1]) ? writes.get(w[1]) : read.apply(w[1]);
            if (v != 0 && v % 7 == 0) return "23514 (deferred): " + w[1] + " = " + v + " is divisible by 7";
        }
        return null;
    }

    /** Commits a transaction's writes; returns a violation if it was committed here before. */
    String commit(RequestId id, Map<String, Long> writes) {
        String violation = applied.add(id) ? null : id + " committed twice";
        data.putAll(writes);
        Set<String> tables = new java.util.TreeSet<>();
        for (String k : writes.keySet()) tables.add(tableOf(k));
        for (String t : tables) versions.merge(t, 1L, Long::sum);
        return violation;
    }

    static List<String> statements(List<org.wanrep.wire.WireMessage> messages) {
        List<String> ops = new ArrayList<>();
        for (var m : messages) for (String s : m.queryText().split(";")) if (!s.isBlank()) ops.add(s.trim());
        return ops;
    }
}
