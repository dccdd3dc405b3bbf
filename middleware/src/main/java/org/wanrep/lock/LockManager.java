package org.wanrep.lock;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Table and row locks taken in delivery order, identically at every site.
 *
 * <p>All of a transaction's locks are enqueued at once (one FIFO queue per resource: a table, a
 * (table, key) row, or {@link TableSet#EVERYTHING}; modes in {@link LockMode}); a transaction is
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
 * <p>Granting is incremental. In a queue, an entry is blocked iff an entry of an incompatible mode
 * is ahead of it, i.e. iff it is behind the first queued entry of some mode incompatible with its
 * own. Each queue keeps its entries per mode in queue order, each entry counts the queues where it
 * is blocked; only a change of the first entry of a mode changes anything, and then exactly the
 * entries of incompatible modes between the old and the new first one change state. So an
 * operation costs what it unblocks, blocks or revokes (times a logarithm), not the number of queued
 * transactions: a site far behind catches up at full speed instead of rescanning its backlog per
 * delivery. Positions are comparable without walking: in every queue, final entries come first in
 * final order, then tentative ones in enqueue order.
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
        long seq;            // position among finals (fin) or among tentatives: queue and grant order
        int blocked;         // queues in which this entry is blocked
        boolean candidate;   // in the current operation's list of possibly grantable entries
        boolean revoking;
        Entry(Object txn, Map<String, LockMode> resources, boolean fin) {
            this.txn = txn; this.resources = resources; this.fin = fin; this.nodes = new Node[resources.size()];
        }
    }

    /** An entry's place in one resource's queue; its position is fixed (a final delivery makes a new node). */
    private static final class Node {
        final Entry entry;
        final LockMode mode;
        final Queue queue;
        /** Its place in a queue as one number, fixed when it is queued: finals in final order, then tentatives in enqueue order. */
        final long position;
        Node(Entry entry, LockMode mode, Queue queue) {
            this.entry = entry; this.mode = mode; this.queue = queue;
            this.position = entry.fin ? entry.seq : TENTATIVE + entry.seq;
        }
    }

    /** Where tentative positions start: behind any final one (a site orders far fewer than 2^62 transactions). */
    private static final long TENTATIVE = 1L << 62;

    /** Queue order (one comparison of longs: every delivery inserts into a queue every in-flight transaction is in). */
    private static final Comparator<Node> POSITION = (a, b) -> Long.compare(a.position, b.position);
    private static final LockMode[] MODES = LockMode.values();
    /** For each mode, the modes it conflicts with. */
    private static final LockMode[][] INCOMPATIBLE = new LockMode[MODES.length][];
    static {
        for (LockMode m : MODES) INCOMPATIBLE[m.ordinal()] = java.util.Arrays.stream(MODES).filter(o -> !m.compatibleWith(o)).toArray(LockMode[]::new);
    }

    /**
     * One mode's nodes of a queue, in position order: a slice of an array. Queues are short, and a node is nearly always
     * added at the tail (finals in final order) and released at the head, each O(1) here; a TreeSet allocated an entry
     * per node and walked its tree (most of the delivery threads' lock work in pgbench's interactive load).
     */
    private static final class Nodes {
        private Node[] a = new Node[2];
        private int start, size;

        Node first() { return size == 0 ? null : a[start]; }

        Node get(int i) { return a[start + i]; }

        int size() { return size; }

        /** The index of the first node whose position is after {@code position} ({@link #size} if none is). */
        int after(long position) {
            int lo = 0, hi = size;
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                if (a[start + mid].position <= position) lo = mid + 1;
                else hi = mid;
            }
            return lo;
        }

        void add(Node n) {
            int i = after(n.position);
            if (i == 0 && start > 0) {   // a new head (a final ahead of tentatives that hold the front)
                a[--start] = n;
                size++;
                return;
            }
            if (start + size == a.length) {   // no room at the end: move to the front, or grow
                Node[] to = size + 1 > a.length / 2 ? new Node[Math.max(4, a.length * 2)] : a;
                System.arraycopy(a, start, to, 0, size);
                if (to == a) java.util.Arrays.fill(a, size, start + size, null);
                a = to;
                start = 0;
            }
            System.arraycopy(a, start + i, a, start + i + 1, size - i);
            a[start + i] = n;
            size++;
        }

        void remove(Node n) {
            int i = after(n.position) - 1;
            if (i < 0 || a[start + i] != n) throw new IllegalStateException("lock queue node not found at its position " + n.position);
            if (i < size / 2) {   // the shorter side moves: the head's side
                System.arraycopy(a, start, a, start + 1, i);
                a[start++] = null;
            } else {
                System.arraycopy(a, start + i + 1, a, start + i, size - i - 1);
                a[start + size - 1] = null;
            }
            if (--size == 0) start = 0;
        }
    }

    /** One resource's FIFO queue, kept per mode. */
    private static final class Queue {
        final String name;
        final Nodes[] byMode = new Nodes[MODES.length];   // made when a mode first occurs: most row queues hold one mode
        int size;
        Queue(String name) { this.name = name; }

        Node first(LockMode m) { Nodes s = byMode[m.ordinal()]; return s == null ? null : s.first(); }

        Nodes of(LockMode m) {
            Nodes s = byMode[m.ordinal()];
            return s != null ? s : (byMode[m.ordinal()] = new Nodes());
        }

        /** The first node of a mode incompatible with {@code m}, or null: nodes of mode m ahead of it are not blocked. */
        Node bound(LockMode m) {
            Node b = null;
            for (LockMode o : INCOMPATIBLE[m.ordinal()]) {
                Node f = first(o);
                if (f != null && (b == null || POSITION.compare(f, b) < 0)) b = f;
            }
            return b;
        }

        boolean blocks(Node n) {
            Node b = bound(n.mode);
            return b != null && POSITION.compare(b, n) < 0;
        }
    }

    /**
     * Runs {@code action} on the nodes of mode {@code k} in {@code q} after {@code from} up to and including {@code to}
     * (null: the end): with {@code to = bound(k)}, those not blocked by anything but what is at or ahead of from.
     */
    private static void between(Queue q, LockMode k, Node from, Node to, java.util.function.Consumer<Node> action) {
        Nodes s = q.byMode[k.ordinal()];
        if (s == null) return;
        int hi = to == null ? s.size() : s.after(to.position);
        for (int i = s.after(from.position); i < hi; i++) action.accept(s.get(i));
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
                insert(n, null);   // at the tail: nothing behind it to block
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
        for (Node n : e.nodes) unlink(n);
        e.fin = true;
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
        List<Node> overtaken = new ArrayList<>();
        int i = 0;
        for (var r : e.resources.entrySet()) {
            Queue q = queues.computeIfAbsent(r.getKey(), Queue::new);
            Node n = new Node(e, r.getValue(), q);
            e.nodes[i++] = n;
            overtaken.clear();
            insert(n, overtaken);
            // A granted entry is blocked nowhere, so the granted ones it overtakes and conflicts with
            // are among those it newly blocks; report them in queue order, as a scan would.
            overtaken.sort(POSITION);
            for (Node t : overtaken) {
                Entry te = t.entry;
                if (te.granted && !te.revoking) {
                    te.revoking = true;
                    revoke.add(te);
                }
            }
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

    /** Queue lengths per table, for diagnostics; a table's row queues are summed as "table (rows)". */
    public Map<String, Integer> queueLengths() { return summarize(queues.values().stream().collect(java.util.stream.Collectors.toMap(q -> q.name, q -> q.size))); }

    static Map<String, Integer> summarize(Map<String, Integer> perResource) {
        Map<String, Integer> m = new java.util.TreeMap<>();
        for (var q : perResource.entrySet()) {
            int at = q.getKey().indexOf(TableSet.ROW);
            m.merge(at < 0 ? q.getKey() : q.getKey().substring(0, at) + " (rows)", q.getValue(), Integer::sum);
        }
        return m;
    }

    // --- blocked counts ------------------------------------------------------------------------

    /**
     * Adds {@code n} at its position. If it becomes the first of its mode, the entries of modes
     * incompatible with it between it and the first node that blocked them already are newly
     * blocked (collected into {@code newlyBlocked} if not null).
     */
    private void insert(Node n, List<Node> newlyBlocked) {
        Queue q = n.queue;
        Node oldFirst = q.first(n.mode);
        if (oldFirst == null || POSITION.compare(n, oldFirst) < 0) {
            for (LockMode k : INCOMPATIBLE[n.mode.ordinal()]) {
                between(q, k, n, q.bound(k), t -> {
                    t.entry.blocked++;
                    if (newlyBlocked != null) newlyBlocked.add(t);
                });
            }
        }
        q.of(n.mode).add(n);
        q.size++;
        if (q.blocks(n)) n.entry.blocked++;
    }

    /** Removes {@code n}; if it was the first of its mode, what only it blocked is unblocked. */
    private void unlink(Node n) {
        Queue q = n.queue;
        if (q.blocks(n)) n.entry.blocked--;
        boolean wasFirst = q.first(n.mode) == n;
        q.of(n.mode).remove(n);
        q.size--;
        if (!wasFirst) return;
        for (LockMode k : INCOMPATIBLE[n.mode.ordinal()]) {
            between(q, k, n, q.bound(k), t -> {
                if (--t.entry.blocked == 0) candidate(t.entry);
            });
        }
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
