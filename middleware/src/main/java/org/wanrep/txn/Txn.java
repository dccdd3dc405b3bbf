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
        /** Granted; another site executes it: waiting until it is final and its write set is here. */
        AWAITING_WRITE_SET,
        /** Applying the write set another site shipped. */
        APPLYING,
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
    /** The members of the view it was finally delivered in (the executor is chosen from them). */
    java.util.List<String> deliveryMembers;
    /** The execution policy in force at its final delivery (the configured sites change through the total order). */
    ExecutionPolicy deliveryPolicy;
    /** Under a write-set policy: the member that executes it (null: every site, symmetric). */
    volatile String executor;
    /** Whether this site's execution captures and ships the write set (this site is the executor). */
    volatile boolean ships;
    /** The write set this site applied instead of executing (its replies answer a client here). */
    volatile WriteSetMessage applied;
    int attempts;
    /** Tentative, and its message belongs to a history this member gave up (it rejoined): end it once rolled back. */
    boolean abandoned;
    public volatile Object attachment;
    /**
     * The statement recording its GSN in the replica ({@code exec.ReplicaPosition}), to run inside its local
     * transaction before COMMIT; null when positions are not kept or its final delivery is not here yet.
     */
    volatile String recordSql;
    /** Its work is COMMIT PREPARED of a block this site prepared before it restarted: a failure stops the site. */
    volatile boolean resolvesPrepared;
    /** A certified block's outcome at this site (null for every other kind). */
    volatile Certifier.Decision certification;
    /**
     * Whether the executor may send COMMIT with the request: its final delivery is here and every transaction ordered
     * before it has finished at this site (commits follow the total order, see {@code ReplicationEngine}).
     */
    volatile boolean commitWithRequest;
    /** Its locks were granted before its turn to commit came: it proceeds when that turn comes (a certified block's origin). */
    boolean grantedAwaitingTurn;
    /** It holds one of the executor's replica connections (counted by the engine until it ends). */
    boolean holdsConnection;
    final Phases phases = new Phases();

    Txn(TxnRequest request, boolean origin) {
        this.request = request;
        this.origin = origin;
        this.work = request;
    }

    public TxnRequest request() { return request; }
    public TxnRequest work() { return work; }
    public boolean isOrigin() { return origin; }
    /** The group member (site and incarnation) that multicast the request, or null if not known. */
    public String originMember() { return originMember; }
    public Phases phases() { return phases; }
    public String recordSql() { return recordSql; }
    /** Its final position in the total order (0 until delivered finally). */
    public long gsn() { return gsn; }
    public int attempts() { return attempts; }
    /** Whether its final delivery has arrived (then it may commit once it executed and its turn came). */
    public boolean isFinal() { return fin; }
    /** Whether COMMIT may go with the request (see {@link #commitWithRequest}); read by the executor when it runs it. */
    public boolean commitsWithRequest() { return commitWithRequest; }
    public synchronized State state() { return state; }
    /** Whether this site executes it for everyone and ships its write set. */
    public boolean ships() { return ships; }
    /** The write set applied here in place of executing it, or null. */
    public WriteSetMessage applied() { return applied; }
    /** For a {@link TxnRequest.Kind#CERTIFY}: whether certification committed it, and why not. */
    public Certifier.Decision certification() { return certification; }
    /** The member that executes it under a write-set policy (null: symmetric). */
    public String executor() { return executor; }

    /**
     * The tag its executor writes into the transaction for capture: the request and the executing
     * member (site and incarnation), so that neither a re-execution elsewhere nor a restarted site's
     * counter can reuse it.
     */
    public String captureTag() { return request.id() + "@" + executor; }

    @Override public String toString() { return request.id() + "[" + state + (fin ? " final" : " tentative") + (origin ? " origin" : "") + "]"; }

    /** Time stamps of the phases of the study's response-time breakdown (System.nanoTime). */
    public static final class Phases {
        public volatile long submitted, optDelivered, finalDelivered, granted, executed, committed, writeSetArrived;
    }
}
