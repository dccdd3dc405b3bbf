package org.wanrep.lock;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;

/**
 * The lock manager as it was before grants became incremental: kept verbatim (bar its name) as the
 * reference model of {@link LockManagerDifferentialTest}. Its grant rescans every queued entry.
 *
 * <p>Table-level locks taken in delivery order, identically at every site.
 *
 * <p>All of a transaction's locks are enqueued at once (one FIFO queue per table); a transaction is
 * granted when, in every one of its queues, nothing ahead of it conflicts. Since every site enqueues
 * the same transactions in the same (final) order, every site serializes conflicting transactions the
 * same way.
 *
 * <p>Opt-safe: a transaction can be enqueued <em>tentatively</em> at its optimistic delivery and run
 * without committing. At its final delivery it moves ahead of every tentative entry in its queues
 * (final entries stay in final order). A tentative transaction that was granted and now conflicts
 * with a transaction ahead of it is aborted (its work is undone) and waits again. Pure and
 * single-threaded: the caller serializes calls.
 */
final class ReferenceLockManager {
    private static final class Entry {
        final Object txn;
        final Map<String, LockMode> resources;
        boolean fin, granted;
        Entry(Object txn, Map<String, LockMode> resources, boolean fin) { this.txn = txn; this.resources = resources; this.fin = fin; }
    }

    private final LockManager.Listener listener;
    private final Map<String, LinkedList<Entry>> queues = new HashMap<>();
    private final Map<Object, Entry> entries = new HashMap<>();

    ReferenceLockManager(LockManager.Listener listener) { this.listener = listener; }

    /** Enqueues a finally ordered transaction (agreed/safe delivery) behind everything. */
    public void enqueueFinal(Object txn, TableSet tables) { enqueue(txn, tables, true); }

    /** Enqueues at optimistic delivery; {@link #makeFinal} must follow. */
    public void enqueueTentative(Object txn, TableSet tables) { enqueue(txn, tables, false); }

    private void enqueue(Object txn, TableSet tables, boolean fin) {
        if (entries.containsKey(txn)) throw new IllegalStateException("transaction " + txn + " already enqueued");
        Entry e = new Entry(txn, tables.resources(), fin);
        entries.put(txn, e);
        if (fin) {
            placeFinal(e);
        } else {
            for (String r : e.resources.keySet()) queues.computeIfAbsent(r, k -> new LinkedList<>()).addLast(e);
            grantWhatCan();
        }
    }

    /**
     * Final delivery of a tentatively enqueued transaction. If its table set changed (e.g. it was
     * enqueued before the catalog knew better) pass the final one.
     */
    public void makeFinal(Object txn) {
        Entry e = entries.get(txn);
        if (e == null) throw new IllegalStateException("transaction " + txn + " not enqueued");
        if (e.fin) return;
        e.fin = true;
        for (String r : e.resources.keySet()) queues.get(r).remove(e);
        placeFinal(e);
    }

    /**
     * Puts a final entry behind the last final entry of each of its queues, i.e. ahead of every
     * tentative one. A tentative entry it overtakes that holds a conflicting grant loses it: it ran
     * on a state without this transaction, which the final order puts first. This holds whether the
     * entry was tentative before or arrives final (a block's exclusive lock, a local read lock, a
     * final delivery with no optimistic one before it).
     */
    private void placeFinal(Entry e) {
        List<Entry> revoke = new ArrayList<>();
        for (var r : e.resources.entrySet()) {
            LinkedList<Entry> q = queues.computeIfAbsent(r.getKey(), k -> new LinkedList<>());
            int at = insertAfterLastFinal(q, e);
            for (int i = at + 1; i < q.size(); i++) {   // everything behind it here is tentative
                Entry t = q.get(i);
                if (t.granted && !r.getValue().compatibleWith(t.resources.get(r.getKey())) && !revoke.contains(t)) revoke.add(t);
            }
        }
        for (Entry t : revoke) {
            t.granted = false;
            listener.revoked(t.txn);
        }
        grantWhatCan();
    }

    /** Commit or abort: frees the transaction's locks. */
    public void release(Object txn) {
        Entry e = entries.remove(txn);
        if (e == null) return;
        for (String r : e.resources.keySet()) {
            LinkedList<Entry> q = queues.get(r);
            q.remove(e);
            if (q.isEmpty()) queues.remove(r);
        }
        grantWhatCan();
    }

    public boolean isGranted(Object txn) {
        Entry e = entries.get(txn);
        return e != null && e.granted;
    }

    public int waiting() {
        int n = 0;
        for (Entry e : entries.values()) if (!e.granted) n++;
        return n;
    }

    public int size() { return entries.size(); }

    /** Queue lengths per table, for diagnostics ({@code SHOW LOCKS}). */
    public Map<String, Integer> queueLengths() {
        Map<String, Integer> m = new java.util.TreeMap<>();
        for (var q : queues.entrySet()) m.put(q.getKey(), q.getValue().size());
        return m;
    }

    private static int insertAfterLastFinal(LinkedList<Entry> q, Entry e) {
        int i = 0;
        Iterator<Entry> it = q.iterator();
        while (it.hasNext() && it.next().fin) i++;
        q.add(i, e);
        return i;
    }

    private void grantWhatCan() {
        // order of grants: by position, final before tentative; deterministic because queues are
        List<Entry> newly = new ArrayList<>();
        for (Entry e : orderedEntries()) {
            if (e.granted) continue;
            if (grantable(e)) {
                e.granted = true;
                newly.add(e);
            }
        }
        for (Entry e : newly) listener.granted(e.txn);
    }

    private boolean grantable(Entry e) {
        for (var r : e.resources.entrySet()) {
            for (Entry ahead : queues.get(r.getKey())) {
                if (ahead == e) break;
                if (!r.getValue().compatibleWith(ahead.resources.get(r.getKey()))) return false;
            }
        }
        return true;
    }

    /** Entries in a deterministic order: finals first in queue order, then tentatives. */
    private List<Entry> orderedEntries() {
        List<Entry> out = new ArrayList<>(entries.size());
        java.util.Set<Entry> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        LinkedList<Entry> all = queues.get(TableSet.EVERYTHING);
        if (all != null) for (Entry e : all) if (seen.add(e)) out.add(e);
        for (Entry e : entries.values()) if (seen.add(e)) out.add(e);
        return out;
    }
}
