package org.wanrep.txn;

/**
 * One update transaction as this site sees it, from delivery to commit. The engine owns the state;
 * the executor may keep what it needs (backend connection, buffered replies) in {@link #attachment}.
 */
public final class Txn {
    public enum State {
        /** Delivered, waiting for its locks. */
        WAITING,
        /** Executing inside BEGIN, replies buffered. */
        RUNNING,
        /** An interactive block's exclusive lock is held; its origin runs the block. */
        HELD,
        /** Executed, waiting for its final delivery before COMMIT (opt-safe only). */
        EXECUTED,
        /** COMMIT sent. */
        COMMITTING,
        /** Revoked while running: roll back when the execution returns. */
        ROLLING_BACK,
        COMMITTED,
        FAILED
    }

    final TxnRequest request;
    final boolean origin;
    /** What runs here: the request itself, or, for an interactive block, its statement log once delivered. */
    volatile TxnRequest work;
    /** The group member that multicast it (a block's lock is dropped if that member leaves). */
    String originMember;
    State state = State.WAITING;
    volatile boolean fin;
    /** Its final position in the total order (0 until delivered finally). */
    volatile long gsn;
    int attempts;
    public volatile Object attachment;
    final Phases phases = new Phases();

    Txn(TxnRequest request, boolean origin) {
        this.request = request;
        this.origin = origin;
        this.work = request;
    }

    public TxnRequest request() { return request; }
    public TxnRequest work() { return work; }
    public boolean isOrigin() { return origin; }
    public Phases phases() { return phases; }
    public int attempts() { return attempts; }
    /** Whether its final delivery has arrived (then it may commit as soon as it executed). */
    public boolean isFinal() { return fin; }
    public synchronized State state() { return state; }

    @Override public String toString() { return request.id() + "[" + state + (fin ? " final" : " tentative") + (origin ? " origin" : "") + "]"; }

    /** Time stamps of the phases of the study's response-time breakdown (System.nanoTime). */
    public static final class Phases {
        public volatile long submitted, optDelivered, finalDelivered, granted, executed, committed;
    }
}
