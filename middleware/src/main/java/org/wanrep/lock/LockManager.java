package org.wanrep.lock;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Table-level locks taken in delivery order, identically at every site.
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
 *
 * <p>Granting is incremental: an entry is grantable in a queue iff it is in the queue's
 * <em>granted prefix</em> (the head if it writes, else the run of readers from the head), so each
 * queue keeps that prefix and each entry counts the queues where it is outside it. A change to a
 * queue moves only entries across the prefix boundary, so an operation costs what it unblocks,
 * blocks or revokes (plus a sort of the newly grantable), not the number of queued transactions: a
 * site far behind catches up at full speed instead of rescanning its backlog per delivery.
 */
public final class LockManager {
    /** What the lock manager tells its owner. */
    public interface Listener {
        /** All locks of {@code txn} are granted: it may execute. */
        void granted(Object txn);

        /** A tentatively granted transaction lost its locks to a transaction finally ordered before it: undo its work. */
        void revoked(Object txn);
    }

    private static final class Entry {
        final Object txn;
        final Map<String, LockMode> resources;   // sorted: revocations are reported in resource order
        final Node[] nodes;                      // one per resource, in the same order
        boolean fin, granted;
        long seq;            // position among finals (fin) or among tentatives: the grant order
        int blocked;         // queues in which this entry is outside the granted prefix
        boolean candidate;   // in the current operation's list of possibly grantable entries
        boolean revoking;
        Entry(Object txn, Map<String, LockMode> resources, boolean fin) {
            this.txn = txn; this.resources = resources; this.fin = fin; this.nodes = new Node[resources.size()];
        }
    }

    /** An entry's place in one resource's queue. */
    private static final class Node {
        final Entry entry;
        final LockMode mode;
        final Queue queue;
        Node prev, next;
        boolean inPrefix;
        Node(Entry entry, LockMode mode, Queue queue) { this.entry = entry; this.mode = mode; this.queue = queue; }
    }

    /**
     * One resource's FIFO queue: final entries first (in final order), then tentative ones. The
     * granted prefix is {@code prefixCount} nodes from the head; {@code frontier} is the first node
     * outside it.
     */
    private static final class Queue {
        final String name;
        Node head, tail, lastFinal, frontier;
        int size, prefixCount;
        Queue(String name) { this.name = name; }

        /** Can {@code n}, the first node outside the prefix, join it? */
        boolean canJoin(Node n) {
            return prefixCount == 0 || (n.mode == LockMode.READ && head.mode == LockMode.READ);
        }
    }

    private final Listener listener;
    private final Map<String, Queue> queues = new HashMap<>();
    private final Map<Object, Entry> entries = new HashMap<>();
    private long finalSeq, tentativeSeq;
    private int waiting;
    /** Entries whose blocked count reached zero during the current operation. */
    private final List<Entry> candidates = new ArrayList<>();

    public LockManager(Listener listener) { this.listener = listener; }

    /** Enqueues a finally ordered transaction (agreed/safe delivery) behind everything. */
    public void enqueueFinal(Object txn, TableSet tables) { enqueue(txn, tables, true); }

    /** Enqueues at optimistic delivery; {@link #makeFinal} must follow. */
    public void enqueueTentative(Object txn, TableSet tables) { enqueue(txn, tables, false); }

    private void enqueue(Object txn, TableSet tables, boolean fin) {
        if (entries.containsKey(txn)) throw new IllegalStateException("transaction " + txn + " already enqueued");
        Entry e = new Entry(txn, tables.resources(), fin);
        entries.put(txn, e);
        waiting++;
        if (fin) {
            placeFinal(e);
        } else {
            e.seq = tentativeSeq++;
            int i = 0;
            for (var r : e.resources.entrySet()) {
                Node n = new Node(e, r.getValue(), queues.computeIfAbsent(r.getKey(), Queue::new));
                e.nodes[i++] = n;
                insertBefore(n, null);
            }
            candidate(e);
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
        for (Node n : e.nodes) unlink(n);
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
        e.seq = finalSeq++;
        List<Entry> revoke = new ArrayList<>();
        int i = 0;
        for (var r : e.resources.entrySet()) {
            Queue q = queues.computeIfAbsent(r.getKey(), Queue::new);
            Node n = new Node(e, r.getValue(), q);
            e.nodes[i++] = n;
            Node before = q.lastFinal == null ? q.head : q.lastFinal.next;
            // Everything behind it here is tentative. A granted one is in the prefix (it conflicts
            // with nothing ahead), so only prefix nodes can lose a grant, and only if the prefix is
            // not readers that this one shares with.
            if (before != null && before.inPrefix && !(n.mode == LockMode.READ && q.head.mode == LockMode.READ)) {
                for (Node t = before; t != null && t.inPrefix; t = t.next) {
                    Entry te = t.entry;
                    if (te.granted && !n.mode.compatibleWith(t.mode) && !te.revoking) {
                        te.revoking = true;
                        revoke.add(te);
                    }
                }
            }
            insertBefore(n, before);
            q.lastFinal = n;
        }
        candidate(e);
        for (Entry t : revoke) {
            t.revoking = false;
            t.granted = false;
            waiting++;
            listener.revoked(t.txn);
        }
        grantWhatCan();
    }

    /** Commit or abort: frees the transaction's locks. */
    public void release(Object txn) {
        Entry e = entries.remove(txn);
        if (e == null) return;
        if (!e.granted) waiting--;
        for (Node n : e.nodes) {
            unlink(n);
            if (n.queue.size == 0) queues.remove(n.queue.name);
        }
        e.candidate = false;   // gone: never granted again
        grantWhatCan();
    }

    public boolean isGranted(Object txn) {
        Entry e = entries.get(txn);
        return e != null && e.granted;
    }

    public int waiting() { return waiting; }

    public int size() { return entries.size(); }

    /** Queue lengths per table, for diagnostics ({@code SHOW LOCKS}). */
    public Map<String, Integer> queueLengths() {
        Map<String, Integer> m = new java.util.TreeMap<>();
        for (var q : queues.values()) m.put(q.name, q.size);
        return m;
    }

    // --- the granted prefix of each queue -------------------------------------------------------

    /** Inserts {@code n} before {@code before} ({@code null}: at the tail) and repairs the prefix. */
    private void insertBefore(Node n, Node before) {
        Queue q = n.queue;
        n.next = before;
        n.prev = before == null ? q.tail : before.prev;
        if (n.prev == null) q.head = n; else n.prev.next = n;
        if (before == null) q.tail = n; else before.prev = n;
        q.size++;
        if (before == null || !before.inPrefix) {
            // At or behind the frontier (the head is always in the prefix, so n is not the head
            // unless the queue was empty): it can only become the frontier or join a prefix of readers.
            if (q.frontier == before && q.canJoin(n)) join(n);
            else {
                if (q.frontier == before) q.frontier = n;
                n.entry.blocked++;
            }
            return;
        }
        // ahead of a prefix node, so the prefix is not empty
        LockMode prefixMode = (q.head == n ? before : q.head).mode;
        if (n.mode == LockMode.READ && prefixMode == LockMode.READ) {
            join(n);                                     // one more reader sharing the prefix
            return;
        }
        // A writer, or a reader ahead of the writer at the head. A writer prefix is only its head, so
        // either n is the new head (and the whole prefix, being alone or ahead of a writer) or n is a
        // writer behind some readers (and ends their prefix). Either way, from before on all leave.
        if (q.head == n) {
            join(n);
            q.frontier = before;
        } else {
            q.frontier = n;
            n.entry.blocked++;
        }
        for (Node t = before; t != null && t.inPrefix; t = t.next) leave(t);
    }

    /** Removes {@code n} from its queue and repairs the prefix. */
    private void unlink(Node n) {
        Queue q = n.queue;
        boolean wasIn = n.inPrefix;
        if (wasIn) { n.inPrefix = false; q.prefixCount--; } else n.entry.blocked--;
        if (q.frontier == n) q.frontier = n.next;
        if (q.lastFinal == n) q.lastFinal = n.prev;
        if (n.prev == null) q.head = n.next; else n.prev.next = n.next;
        if (n.next == null) q.tail = n.prev; else n.next.prev = n.prev;
        n.prev = n.next = null;
        q.size--;
        if (q.prefixCount == 0 || !wasIn) extend(q);
    }

    /** Lets nodes from the frontier join the prefix while they can. */
    private void extend(Queue q) {
        while (q.frontier != null && q.canJoin(q.frontier)) {
            Node f = q.frontier;
            f.entry.blocked--;
            join(f);
            q.frontier = f.next;
            if (f.mode == LockMode.WRITE) break;
        }
    }

    private void join(Node n) {
        n.inPrefix = true;
        n.queue.prefixCount++;
        if (n.entry.blocked == 0) candidate(n.entry);
    }

    private void leave(Node n) {
        n.inPrefix = false;
        n.queue.prefixCount--;
        n.entry.blocked++;
    }

    private void candidate(Entry e) {
        if (!e.candidate && !e.granted) {
            e.candidate = true;
            candidates.add(e);
        }
    }

    /**
     * Grants what became grantable, in the order the full scan did: finals in final order, then
     * tentatives in enqueue order (every entry is in the {@link TableSet#EVERYTHING} queue, which
     * is ordered so). Deterministic because queues are.
     */
    private void grantWhatCan() {
        if (candidates.isEmpty()) return;
        List<Entry> newly = new ArrayList<>(candidates.size());
        for (Entry e : candidates) {
            boolean live = e.candidate;
            e.candidate = false;
            if (live && !e.granted && e.blocked == 0) newly.add(e);
        }
        candidates.clear();
        newly.sort(GRANT_ORDER);
        for (Entry e : newly) { e.granted = true; waiting--; }
        for (Entry e : newly) listener.granted(e.txn);
    }

    private static final Comparator<Entry> GRANT_ORDER =
            Comparator.<Entry>comparingInt(e -> e.fin ? 0 : 1).thenComparingLong(e -> e.seq);
}
