package org.wanrep.txn;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.Gcs;
import org.wanrep.gcs.GcsListener;
import org.wanrep.gcs.GcsMessage;
import org.wanrep.gcs.GcsView;
import org.wanrep.gcs.MsgId;
import org.wanrep.lock.LockManager;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Symmetric replication at one site: every delivered update transaction takes its table locks in
 * delivery order and runs here once granted, inside BEGIN, replies buffered. It commits only when
 * its delivery is final, so the same rule serves agreed, safe and opt-safe: with opt-safe the work
 * starts at the optimistic delivery, and a transaction the final order puts behind a conflicting one
 * is revoked (rolled back) and runs again when its locks come back. Locks are released after COMMIT
 * returned, so the next conflicting transaction sees the committed state at every site.
 *
 * <p>The origin's client waits on {@link #submit}'s future, completed when the local COMMIT returned.
 */
public final class ReplicationEngine implements GcsListener, LockManager.Listener {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicationEngine.class);

    private final String site;
    private final Delivery delivery;
    private final TxnExecutor executor;
    private final LockManager locks = new LockManager(this);
    private final Map<RequestId, Txn> txns = new HashMap<>();
    private final Map<RequestId, CompletableFuture<Txn>> waiting = new HashMap<>();
    private final Map<RequestId, TxnRequest> submittedHere = new HashMap<>();
    private final Map<MsgId, RequestId> byMsg = new HashMap<>();
    private final AtomicLong seq = new AtomicLong();
    private volatile Gcs gcs;
    private volatile GcsView view;

    public ReplicationEngine(String site, Delivery delivery, TxnExecutor executor) {
        if (!delivery.ordered()) throw new IllegalArgumentException("update transactions need ordered delivery, not " + delivery);
        this.site = site;
        this.delivery = delivery;
        this.executor = executor;
    }

    public void attach(Gcs g) { this.gcs = g; }

    public RequestId nextId() { return new RequestId(site, seq.incrementAndGet()); }

    public GcsView view() { return view; }

    /**
     * Multicasts an update transaction from this site. The future completes with the transaction
     * after its local COMMIT (its replies are then with the executor's attachment), or exceptionally
     * if it cannot be ordered.
     */
    public CompletableFuture<Txn> submit(TxnRequest r) {
        CompletableFuture<Txn> f = new CompletableFuture<>();
        synchronized (this) {
            waiting.put(r.id(), f);
            submittedHere.put(r.id(), r);
        }
        try {
            MsgId m = gcs.multicast(TxnRequestCodec.encode(r), delivery);
            synchronized (this) { if (waiting.containsKey(r.id())) byMsg.put(m, r.id()); }
        } catch (RuntimeException e) {
            synchronized (this) {
                waiting.remove(r.id());
                submittedHere.remove(r.id());
            }
            f.completeExceptionally(e);
        }
        return f;
    }

    // ------------------------------------------------------------------ deliveries

    @Override public void optimistic(GcsMessage m) {
        TxnRequest r = TxnRequestCodec.decode(m.payload());
        synchronized (this) {
            Txn t = newTxn(r);
            t.phases.optDelivered = System.nanoTime();
            locks.enqueueTentative(r.id(), r.tables());
        }
    }

    @Override public void ordered(GcsMessage m, long gsn) {
        TxnRequest r = TxnRequestCodec.decode(m.payload());
        synchronized (this) {
            byMsg.remove(m.id());
            Txn t = txns.get(r.id());
            if (t == null) {
                t = newTxn(r);
                t.fin = true;
                t.phases.finalDelivered = System.nanoTime();
                locks.enqueueFinal(r.id(), r.tables());
            } else {
                t.fin = true;
                t.phases.finalDelivered = System.nanoTime();
                locks.makeFinal(r.id());
                if (t.state == Txn.State.EXECUTED) commit(t);
            }
        }
    }

    private Txn newTxn(TxnRequest r) {
        boolean origin = r.id().site().equals(site) && waiting.containsKey(r.id());
        Txn t = new Txn(r, origin);
        TxnRequest mine = submittedHere.get(r.id());
        if (mine != null) t.phases.submitted = System.nanoTime();
        txns.put(r.id(), t);
        return t;
    }

    @Override public void viewChanged(GcsView v) {
        view = v;
        if (!v.primary()) LOG.warn("site {} left the primary component ({}): update transactions fail until it is back", site, v);
    }

    @Override public void undeliverable(MsgId id, Delivery d, String reason) {
        CompletableFuture<Txn> f;
        synchronized (this) {
            RequestId rid = byMsg.remove(id);
            f = rid == null ? null : waiting.remove(rid);
            if (rid != null) submittedHere.remove(rid);
        }
        if (f != null) f.completeExceptionally(new IllegalStateException("transaction could not be ordered: " + reason));
    }

    // ------------------------------------------------------------------ locks and execution

    @Override public void granted(Object id) {   // called with the engine's monitor held
        Txn t = txns.get((RequestId) id);
        t.phases.granted = System.nanoTime();
        if (t.state == Txn.State.WAITING) run(t);
        else if (t.state == Txn.State.ROLLING_BACK) { /* runs again once the rollback returned */ }
    }

    @Override public void revoked(Object id) {   // called with the engine's monitor held
        Txn t = txns.get((RequestId) id);
        switch (t.state) {
            case RUNNING -> {
                // roll back when the execution returns; cancel it so it cannot hold row locks that
                // the transaction now ordered before it needs (PostgreSQL would break the deadlock
                // by aborting either of them)
                t.state = Txn.State.ROLLING_BACK;
                executor.cancel(t);
            }
            case EXECUTED -> rollback(t);
            default -> { }
        }
    }

    private void run(Txn t) {
        t.state = Txn.State.RUNNING;
        t.attempts++;
        executor.execute(t, o -> executed(t, o));
    }

    private synchronized void executed(Txn t, TxnExecutor.Outcome o) {
        t.phases.executed = System.nanoTime();
        if (t.state == Txn.State.ROLLING_BACK || o == TxnExecutor.Outcome.RETRY) {
            if (o == TxnExecutor.Outcome.RETRY) LOG.debug("{}: transient refusal, running it again", t);
            rollback(t);
            return;
        }
        // an ERROR is deterministic: every site refuses alike. Its replies (the error) are
        // buffered; COMMIT of the failed block then ends it as PostgreSQL does, as a rollback.
        t.state = Txn.State.EXECUTED;
        if (t.fin) commit(t);
    }

    private void commit(Txn t) {
        t.state = Txn.State.COMMITTING;
        executor.commit(t, o -> committed(t, o));
    }

    private synchronized void committed(Txn t, TxnExecutor.Outcome o) {
        t.phases.committed = System.nanoTime();
        if (o == TxnExecutor.Outcome.RETRY) {   // e.g. a serialization failure at COMMIT
            rollback(t);
            return;
        }
        t.state = o == TxnExecutor.Outcome.OK ? Txn.State.COMMITTED : Txn.State.FAILED;
        finish(t);
    }

    private void rollback(Txn t) {
        t.state = Txn.State.ROLLING_BACK;
        executor.rollback(t, o -> rolledBack(t));
    }

    private synchronized void rolledBack(Txn t) {
        t.state = Txn.State.WAITING;
        if (locks.isGranted(t.request.id())) run(t);
    }

    private void finish(Txn t) {
        RequestId id = t.request.id();
        txns.remove(id);
        submittedHere.remove(id);
        executor.finish(t);
        locks.release(id);
        CompletableFuture<Txn> f = waiting.remove(id);
        if (f != null) f.complete(t);
    }

    /** This site stops: every client still waiting gets an error now. */
    public void shutdown(String reason) {
        List<CompletableFuture<Txn>> fs;
        synchronized (this) {
            fs = new ArrayList<>(waiting.values());
            waiting.clear();
            submittedHere.clear();
            byMsg.clear();
        }
        for (CompletableFuture<Txn> f : fs) f.completeExceptionally(new IllegalStateException("site " + site + " stopped: " + reason));
    }

    /** Diagnostics: transactions here, waiting for locks, lock queues. */
    public synchronized String describe() {
        return "site " + site + ": " + txns.size() + " transactions, " + locks.waiting() + " waiting for locks, queues " + locks.queueLengths();
    }
}
