package org.wanrep.txn.sim;

import org.wanrep.lock.TableSet;
import org.wanrep.txn.ExecutionPolicy;
import org.wanrep.txn.RequestId;
import org.wanrep.txn.WriteSetMessage;
import org.wanrep.txn.WriteSetMessageCodec;
import org.wanrep.txn.Txn;
import org.wanrep.txn.TxnRequest;
import org.wanrep.wire.WireMessage;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

/**
 * The clients: autocommit requests and interactive blocks submitted from every serving site, over a
 * few small tables ({@link MemReplica}'s statements), so that transactions conflict often. A block
 * behaves as {@code InteractiveBlock} drives one: BEGIN (its snapshot, and the site's commit count), at
 * the first write {@code EXCLUSIVE}; once granted it aborts (RELEASE) if anything committed here since
 * BEGIN, else runs its statements on its snapshot and ships them as a {@code STATEMENT_LOG}, commits
 * when that is delivered and tells the engine ({@code blockCommitted}).
 */
final class Workload {
    private static final String[] TABLES = {"a", "b", "c", "d"};
    private static final int KEYS = 3;

    private final EngineWorld w;
    private final double rate;
    private final double blockShare;

    Workload(EngineWorld w) {
        this.w = w;
        this.rate = 0.002 + w.rnd.nextDouble() * 0.012;   // per serving site and step (2.5 ms): from light to overload
        this.blockShare = w.rnd.nextInt(3) * 0.1;
    }

    /** One step of the clients: each serving site may start a transaction. */
    void tick() {
        for (EngineWorld.SiteNode n : new ArrayList<>(w.nodes.values())) {
            if (!n.ready() || w.rnd.nextDouble() >= rate) continue;
            if (w.rnd.nextDouble() < blockShare) block(n);
            else autocommit(n);
        }
    }

    private String key() { return TABLES[w.rnd.nextInt(TABLES.length)] + "." + w.rnd.nextInt(KEYS); }

    /** 1-3 statements; a block gets no deferred check (its origin commits outside the executor). */
    private List<String> statements(boolean deferredChecks) {
        List<String> ops = new ArrayList<>();
        int n = 1 + w.rnd.nextInt(3);
        for (int i = 0; i < n; i++) {
            int kind = w.rnd.nextInt(deferredChecks ? 5 : 4);
            String k = key();
            ops.add(switch (kind) {
                case 0 -> "add " + k + " " + (1 + w.rnd.nextInt(9));
                case 1 -> "app " + k + " " + w.rnd.nextInt(100);
                case 2 -> "cpy " + k + " " + key();
                case 3 -> "sub " + k + " " + (1 + w.rnd.nextInt(9));
                default -> "dfr " + k;
            });
        }
        return ops;
    }

    private static TableSet tableSet(List<String> ops) {
        Set<String> reads = new TreeSet<>(), writes = new TreeSet<>();
        for (String op : ops) {
            String[] p = op.split(" ");
            if (p[0].equals("dfr")) reads.add(MemReplica.tableOf(p[1]));
            else writes.add(MemReplica.tableOf(p[1]));
            if (p[0].equals("cpy")) reads.add(MemReplica.tableOf(p[2]));
        }
        return TableSet.of(reads, writes);
    }

    private TxnRequest request(RequestId id, TxnRequest.Kind kind, TableSet tables, List<String> ops) {
        List<WireMessage> ms = new ArrayList<>();
        for (String op : ops) ms.add(WireMessage.query(op));
        return new TxnRequest(id, kind, tables, "db", ms, w.sim.now() * 1000, 0, Map.of());
    }

    private void autocommit(EngineWorld.SiteNode n) {
        List<String> ops = statements(true);
        TxnRequest r = request(n.engine.nextId(), TxnRequest.Kind.AUTOCOMMIT, tableSet(ops), ops);
        if (w.policy != ExecutionPolicy.Kind.SYMMETRIC) r = r.shippingWriteSet();
        TxnRequest req = r;
        CompletableFuture<Txn> f = n.engine.submit(req);
        w.checker.submitted(n, req.id(), f);
        f.whenComplete((t, e) -> {
            if (e != null || t.state() != Txn.State.COMMITTED) return;
            if (!n.replica.applied.contains(req.id())) w.violation(n + ": " + req.id() + " acknowledged as committed, not in the replica");
            w.checker.acknowledged(n, req.id());
        });
    }

    /** Runs a later step of a client as its own event (never inside the engine's callbacks). */
    private void then(EngineWorld.SiteNode n, long delay, Runnable r) {
        w.sim.schedule(delay, () -> { if (n.serving()) r.run(); });
    }

    private void block(EngineWorld.SiteNode n) {
        long commitsAtBegin = n.engine.localCommits();
        Map<String, Long> snapshot = new HashMap<>(n.replica.data);
        Map<String, Long> versionsAtBegin = new HashMap<>(n.replica.versions);
        List<String> ops = statements(false);
        then(n, w.rnd.nextInt(20), () -> {   // reads, then the first write
            RequestId id = n.engine.nextId();
            CompletableFuture<Txn> granted = n.engine.submit(request(id, TxnRequest.Kind.EXCLUSIVE, TableSet.allTables(), List.of()));
            w.checker.submitted(n, id, granted);
            granted.whenComplete((t, e) -> then(n, 0, () -> {
                if (e != null) return;                        // not ordered: the client gets an error, no lock
                if (n.engine.localCommits() != commitsAtBegin) {   // its snapshot may be stale: 40001
                    release(n, id);
                    return;
                }
                then(n, w.rnd.nextInt(20), () -> runBlock(n, id, ops, snapshot, versionsAtBegin));
            }));
        });
    }

    private void runBlock(EngineWorld.SiteNode n, RequestId id, List<String> ops, Map<String, Long> snapshot, Map<String, Long> versionsAtBegin) {
        Map<String, Long> writes = new HashMap<>();
        if (MemReplica.run(ops, k -> snapshot.getOrDefault(k, 0L), writes) != null || w.rnd.nextInt(10) == 0) {
            release(n, id);   // a statement failed, or the client rolled back
            return;
        }
        if (w.policy != ExecutionPolicy.Kind.SYMMETRIC) {
            shipBlock(n, id, writes, versionsAtBegin);
            return;
        }
        CompletableFuture<Txn> delivered = n.engine.submit(request(id, TxnRequest.Kind.STATEMENT_LOG, TableSet.allTables(), ops));
        w.checker.submitted(n, id, delivered);
        delivered.whenComplete((t, e) -> then(n, 0, () -> {
            if (e != null) return;   // ROLLBACK here; the others drop the block when this member leaves
            then(n, 1 + w.rnd.nextInt(w.maxLatencyMs), () -> {
                if (!n.replica.versions.equals(versionsAtBegin))
                    w.violation(n + ": block " + id + " commits on a snapshot from BEGIN, but the replica changed since (" + versionsAtBegin + " now " + n.replica.versions + ")");
                String twice = n.replica.commit(id, writes);
                if (twice != null) w.violation(n + ": " + twice);
                n.engine.blockCommitted(id, true);
                w.checker.acknowledged(n, id);
            });
        }));
    }

    /**
     * A block's COMMIT under a write-set policy, as InteractiveBlock does it: commit here, then send the
     * write set through the total order ({@code WRITESET_LOG}); the client hears COMMIT once that is
     * delivered. A site that committed but cannot send it stops.
     */
    private void shipBlock(EngineWorld.SiteNode n, RequestId id, Map<String, Long> writes, Map<String, Long> versionsAtBegin) {
        if (!n.replica.versions.equals(versionsAtBegin))
            w.violation(n + ": block " + id + " commits on a snapshot from BEGIN, but the replica changed since (" + versionsAtBegin + " now " + n.replica.versions + ")");
        String twice = n.replica.commit(id, writes);
        if (twice != null) w.violation(n + ": " + twice);
        WriteSetMessage m = new WriteSetMessage(id, n.member, true, List.of(), MemWriteSetIo.writeSet(id + "@" + n.member, writes), Map.of());
        TxnRequest log = new TxnRequest(id, TxnRequest.Kind.WRITESET_LOG, TableSet.allTables(), "db", List.of(), w.sim.now() * 1000, 0, Map.of(),
                true, WriteSetMessageCodec.encode(m));
        CompletableFuture<Txn> delivered = n.engine.submit(log);
        w.checker.submitted(n, id, delivered);
        delivered.whenComplete((t, e) -> then(n, 0, () -> {
            if (e != null) {
                n.engine.fail("site " + n.site + " committed block " + id + " but cannot ship its write set: " + e.getMessage());
                return;
            }
            n.engine.blockCommitted(id, true);
            w.checker.acknowledged(n, id);
        }));
    }

    private void release(EngineWorld.SiteNode n, RequestId id) {
        try {
            w.checker.submitted(n, id, n.engine.submit(request(id, TxnRequest.Kind.RELEASE, TableSet.allTables(), List.of())));
        } catch (RuntimeException e) {
            // the others drop the block when this member leaves the view
        }
    }
}
