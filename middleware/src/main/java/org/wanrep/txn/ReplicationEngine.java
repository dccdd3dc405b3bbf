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
import org.wanrep.lock.TableSet;

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
 *
 * <p>Interactive blocks (several round trips between BEGIN and COMMIT) use an exclusive lock: an
 * {@code EXCLUSIVE} request takes the lock on every table in delivery order at every site; the
 * origin runs the block on its own backend once granted; the block's {@code STATEMENT_LOG} (or a
 * {@code RELEASE} if it did not commit) then runs at the other sites under that lock, and the
 * origin commits when the log is delivered. A block whose origin member leaves the view before its
 * log was delivered is dropped alike at every survivor (virtual synchrony: they all delivered the
 * same messages before the new view).
 *
 * <p>Write-set policies ({@link ExecutionPolicy}): locks are taken in delivery order everywhere as
 * above, but only the transaction's executor runs it (tagged for capture); once committed it ships
 * the write set (RELIABLE, see {@link WriteSetIo}). Every other site, once the transaction is granted
 * <em>and final</em> and its write set is here, applies it in one local transaction; nothing is applied
 * tentatively. If the executor leaves the view before its write set arrived (virtual synchrony: then
 * no survivor has it), the survivors name the same new executor, which executes it. DDL and TRUNCATE,
 * which logical decoding does not carry, stay symmetric.
 */
public final class ReplicationEngine implements GcsListener, LockManager.Listener {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicationEngine.class);

    private final String site;
    private final Delivery delivery;
    private final TxnExecutor executor;
    /** Replaced at a configuration change's GSN (sitesChanged): write-set executors follow the configured sites. */
    private volatile ExecutionPolicy policy;
    private final WriteSetIo writeSetIo;
    /** Write sets shipped by other sites, by transaction, until applied here (they may precede the delivery). */
    private final Map<RequestId, WriteSetMessage> writeSets = new HashMap<>();
    private java.util.function.Consumer<String> fatal = reason -> LOG.error("{}", reason);
    /** Why this replica stopped following the others (null while it follows): then it does nothing more. */
    private volatile String failure;
    /** The last ordered messages (delivery thread only): a second final delivery of one stops the site. */
    private final java.util.Set<org.wanrep.gcs.MsgId> recentlyOrdered = java.util.Collections.newSetFromMap(
            new java.util.LinkedHashMap<>(1 << 16, 0.75f, false) {
                @Override protected boolean removeEldestEntry(Map.Entry<org.wanrep.gcs.MsgId, Boolean> e) { return size() > 200_000; }
            });
    private final Object fatalLock = new Object();
    private volatile String self;
    private final LockManager locks = new LockManager(this);
    private final Map<RequestId, Txn> txns = new HashMap<>();
    private final Map<RequestId, CompletableFuture<Txn>> waiting = new HashMap<>();
    private final Map<RequestId, TxnRequest> submittedHere = new HashMap<>();
    private final Map<MsgId, RequestId> byMsg = new HashMap<>();
    private final Map<Object, CompletableFuture<Void>> localLocks = new HashMap<>();
    private final Map<RequestId, Object> originWork = new HashMap<>();
    /** Blocks of this site whose end (log or release) could not be ordered: released at the next primary view. */
    private final Map<RequestId, TxnRequest> unreleased = new HashMap<>();
    private final AtomicLong seq = new AtomicLong();
    private final AtomicLong localSeq = new AtomicLong();
    private final AtomicLong commits = new AtomicLong();
    private volatile long lastGsn;
    /** GSNs ordered here whose transaction has not finished (monitor): the lowest bounds the low-water mark. */
    private final java.util.TreeSet<Long> unfinished = new java.util.TreeSet<>();
    /** The transactions of {@link #unfinished}, by GSN: the lowest is the one whose turn it is to commit. */
    private final Map<Long, Txn> unfinishedTxns = new HashMap<>();
    /** The executor's replica connections (its pool): at most this many transactions hold one at a time. */
    private int replicaConnections = Integer.MAX_VALUE;
    /** Transactions that hold one of the executor's replica connections, from their first run to their end. */
    private int connectionsInUse;
    /** Granted transactions waiting for a connection to be left for them (see {@link #run}), in the order they came. */
    private final java.util.LinkedHashSet<Txn> waitingForConnection = new java.util.LinkedHashSet<>();

    /**
     * The number of replica connections the executor has for transactions other sites originated (pool.size). Commits
     * follow the total order, so a transaction that executed keeps its connection until its turn: no more than this
     * many may run at once, one of them always left for the transaction whose turn it is.
     */
    public synchronized void replicaConnections(int n) {
        if (n < 1) throw new IllegalArgumentException("the executor needs at least one replica connection, not " + n);
        replicaConnections = n;
    }

    /** Whether the executor runs {@code t} on one of its replica connections (the origin's own update runs on its client's backend). */
    private static boolean usesReplicaConnection(Txn t) {
        return !(t.origin && t.request.kind() == TxnRequest.Kind.AUTOCOMMIT);
    }

    /** A connection was left free: the transaction whose turn it is runs first, then the others in the order they came. */
    private void runWaitingForConnection() {
        if (waitingForConnection.isEmpty()) return;
        for (Txn t : new ArrayList<>(waitingForConnection)) {
            if (connectionsInUse >= replicaConnections - 1 && !(t.fin && inTurn(t))) continue;
            waitingForConnection.remove(t);
            if (t.state == Txn.State.WAITING && txns.get(t.request.id()) == t && locks.isGranted(t.request.id())
                    && revokedRollingBack.isEmpty() && !grantsHeld.contains(t.request.id())) run(t);
        }
    }
    /** The last GSN ordered, as the monitor's holders see it (lastGsn moves before the monitor is taken). */
    private long orderedUpTo;
    /** Whether each transaction records its GSN in the replica (see {@link #recover}). */
    private volatile boolean recordPositions;
    /** Every site of the cluster is being stopped on purpose: losing the majority then is expected, not a warning. */
    private volatile boolean clusterStopping;

    /** Says that every site is about to stop (an in-process cluster closing): see {@link #clusterStopping}. */
    public void clusterStopping() { clusterStopping = true; }
    private long records;
    /** GSNs above lastGsn this replica had committed before it stopped (out of order): skipped when replayed. */
    private final java.util.NavigableSet<Long> alreadyHave = new java.util.TreeSet<>();
    private volatile Runnable newHistory = () -> { };
    private volatile OrderedLog log;
    private volatile CatchUpSource catchUpSource;
    private volatile boolean catchingUp;
    private volatile long catchUpTarget;
    private volatile java.util.function.Consumer<TxnRequest> commitHook = r -> { };
    private final Map<RequestId, Long> submitTimes = new HashMap<>();
    private final PhaseStats phaseStats = new PhaseStats();
    private volatile Gcs gcs;
    private volatile GcsView view;
    private volatile FlowControl flow = FlowControl.NONE;
    /** Certification of interactive blocks: fed every final delivery, in order (monitor held). */
    private Certifier certifier = new Certifier(DEFAULT_CERTIFICATION_WINDOW);
    private final AtomicLong certifiedCommits = new AtomicLong(), certificationAborts = new AtomicLong(), ownCertificationAborts = new AtomicLong();
    /** Certified blocks of other sites that this site applied from the write set their CERTIFY carried, or replayed from their log. */
    private final AtomicLong certifiedApplied = new AtomicLong(), certifiedReplayed = new AtomicLong();
    private volatile boolean certifyBlocks;

    /** Deliveries the certifier remembers (setting {@code blocks.certification_window}). */
    public static final int DEFAULT_CERTIFICATION_WINDOW = 100_000;

    public ReplicationEngine(String site, Delivery delivery, TxnExecutor executor) {
        this(site, delivery, executor, new ExecutionPolicy(ExecutionPolicy.Kind.SYMMETRIC, List.of(site), Map.of()), WriteSetIo.NONE);
    }

    public ReplicationEngine(String site, Delivery delivery, TxnExecutor executor, ExecutionPolicy policy, WriteSetIo writeSetIo) {
        if (!delivery.ordered()) throw new IllegalArgumentException("update transactions need ordered delivery, not " + delivery);
        this.site = site;
        this.leftover = new LeftoverBlocks(site, this::fail);
        this.delivery = delivery;
        this.executor = executor;
        this.policy = policy;
        this.writeSetIo = writeSetIo;
    }

    /** Where a site that rejoins behind the others fetches what it missed: ordered requests from a serving site's log. */
    public interface CatchUpSource {
        /** Up to {@code max} log entries from GSN {@code from} to {@code to} (with the views between), from a member of {@code v}. */
        List<OrderedLog.Entry> fetch(GcsView v, long from, long to, int max) throws Exception;

        /**
         * Feeds {@code each} the log entries from GSN {@code from} to {@code to} in order, the views between included,
         * each GSN once; stops where the logs bring nothing new. Returns the GSN after the last one fed.
         */
        default long scan(GcsView v, long from, long to, java.util.function.Consumer<OrderedLog.Entry> each) throws Exception {
            long next = from;
            while (next <= to) {
                long before = next;
                for (OrderedLog.Entry e : fetch(v, next, to, 2000)) {
                    if (!e.isView()) {
                        if (e.gsn() < next) continue;
                        next = e.gsn() + 1;
                    }
                    each.accept(e);
                }
                if (next == before) break;   // nothing new (only views, or nothing): the logs end here
            }
            return next;
        }
    }

    /**
     * What the replica had when this site started ({@code exec.ReplicaPosition}): every GSN up to
     * {@code doneUpTo} and the ones in {@code above}; from now on every transaction records its GSN in
     * its own local transaction. {@code newHistory} forgets the recorded positions when the group starts
     * a new history (every site started afresh: GSNs count from 1 again). Before the member starts.
     */
    public synchronized void recover(long doneUpTo, java.util.NavigableSet<Long> above, Runnable newHistory) {
        lastGsn = orderedUpTo = doneUpTo;
        alreadyHave.clear();
        alreadyHave.addAll(above);
        this.newHistory = newHistory;
        recordPositions = true;
    }

    /** Where a site that cannot catch up from the logs gets a copy of a serving site's replica. */
    public interface StateTransferSource {
        /** Replaces this replica by a copy of a member of {@code v}'s; returns the GSN up to which the copy has everything. */
        long transfer(GcsView v) throws Exception;

        /** About how many bytes a copy moves (this replica's size), or -1 if unknown. */
        default long replicaBytes() { return -1; }
    }

    private volatile CatchUpChoice catchUpChoice = CatchUpChoice.replayAlways();

    /** How this site chooses between replaying a gap from the logs and a state transfer. */
    public void chooseCatchUpBy(CatchUpChoice c) { this.catchUpChoice = c; }

    private volatile StateTransferSource stateTransfer;
    /** After a state transfer: ordered deliveries up to this GSN are in the copy already. */
    private long skipUpTo;

    /**
     * For an engine that does not record its replica's position (write-set policies): whether the replica took part
     * in a group history, kept in the replica itself. Without it a site restarted under agreed delivery, whose last
     * deliveries (as a cut-off sequencer, say) the group never ordered, would count as empty and keep them.
     */
    public interface HistoryMarker {
        /** Whether the replica took part in a history (read once, before the member starts). */
        boolean marked() throws Exception;
        /** Records that it does: before the first ordered delivery of this process takes effect. */
        void mark() throws Exception;
        /** This replica, as it is, founds a new history: the earlier one's deliveries mean nothing now. */
        void clear() throws Exception;
    }

    private volatile HistoryMarker historyMarker;
    /** The replica took part in a history whose position it does not record (see {@link HistoryMarker}). */
    private volatile boolean unrecordedHistory;
    /** This process wrote the marker already (delivery thread). */
    private boolean historyMarked;
    /** This process has seen a primary view (delivery thread). */
    private boolean sawPrimary;

    /** Keeps whether the replica took part in a history in {@code m}; before the member starts. */
    public void markHistoryWith(HistoryMarker m) throws Exception {
        this.unrecordedHistory = m.marked();
        this.historyMarker = m;
    }

    /**
     * Write-set policies: what a serving site does when a primary view takes in a member that was not in its last
     * one. The joiner cannot replay write sets, and from the view's first GSN F on it may be an executor itself (a
     * table's primary) that the others wait for, so a snapshot taken later could wait for the joiner for ever: this
     * site queues an all-tables lock at exactly F-1 (on the delivery thread, before any delivery of the view) and
     * {@code s} exports snapshots under it for the joiner ({@code exec.SnapshotExport.prepareForJoiners}).
     */
    public void snapshotsForJoiners(java.util.function.Consumer<Boundary> s) { this.joinerSnapshots = s; }
    private volatile java.util.function.Consumer<Boundary> joinerSnapshots;
    /** The members of the last primary view this member was in (delivery thread; null before the first). */
    private List<String> lastPrimaryMembers;

    /** A site whose gap the logs do not cover (or whose replica is new) transfers state from {@code s}. */
    public void stateTransferFrom(StateTransferSource s) { this.stateTransfer = s; }

    /**
     * A site new to the cluster: with nothing recorded in its replica it takes a state transfer rather than
     * replaying the logs from GSN 1, since the others' replicas need not have been empty when their history
     * began (data loaded before, or a history started anew over existing data).
     */
    public void newSite(boolean b) { this.newSite = b; }
    private volatile boolean newSite;

    /** Keeps what is ordered here in {@code l}, to serve sites that rejoin. */
    public void keepLog(OrderedLog l) { this.log = l; }

    /** The log of ordered requests this site keeps (null if none). */
    public OrderedLog orderedLog() { return log; }

    /** A site that rejoins behind the others catches up from {@code s} instead of stopping. */
    public void catchUpFrom(CatchUpSource s) { this.catchUpSource = s; }

    /** The last completed catch-up: transactions replayed (GSNs) and how long it took. */
    public record CatchUp(long gsns, long millis) {}

    private volatile CatchUp lastCatchUp;

    /** The last catch-up this site completed, or null. */
    public CatchUp lastCatchUp() { return lastCatchUp; }

    /** Whether this site is replaying what it missed (it serves nobody until done). */
    public boolean catchingUp() { return catchingUp || draining; }

    /** While catching up: how many ordered transactions it still has to finish. */
    public synchronized long catchUpLag() {
        if (!catchingUp) {
            Gcs g = gcs;
            return draining && g != null ? g.queuedDeliveries() + txns.size() : 0;
        }
        long done = unfinished.isEmpty() ? orderedUpTo : unfinished.first() - 1;
        return Math.max(0, catchUpTarget - done);
    }

    /**
     * For flow control: ordered transactions this site still has to finish before it serves again (what it
     * replays and what queues behind), 0 when it serves or while a state transfer runs (whose time the
     * load does not change: the others are not paced for it).
     */
    public long lagBehind() {
        if (draining) current();   // ends the drain once worked off (else only a client's request would)
        if (transferring || !(catchingUp || draining)) return 0;
        Gcs g = gcs;
        long lag = catchUpLag() + (catchingUp && g != null ? g.queuedDeliveries() : 0);
        return lag > DRAINED ? lag : 0;   // a few in flight is the normal backlog of a serving site
    }

    private volatile boolean transferring;
    private volatile long transfers;

    /**
     * How many state transfers this site began: each replaces the replica's databases, which ends every backend
     * open on them (a session that finds its backend gone after one tells its client so).
     */
    public long transfers() { return transfers; }

    /**
     * Waits (at most {@code wait}) until a majority of the view holds every GSN up to {@code gsn}, so that a copy of
     * this replica at {@code gsn} is the group's history: under AGREED delivery this site may have delivered, as the
     * sequencer say, what nobody else holds yet, and had it then dropped out a joiner would keep transactions the
     * group never ordered. False if that did not happen in time.
     */
    public boolean awaitUniform(long gsn, java.time.Duration wait) throws InterruptedException {
        Gcs g = gcs;
        long end = System.nanoTime() + wait.toNanos();
        while (g != null && g.uniformGsn() < gsn) {
            if (System.nanoTime() > end || failure != null) return false;
            Thread.sleep(5);
        }
        return true;
    }

    /** Every GSN up to this one has finished here (for flow control's pacing while catching up). */
    public synchronized long finishedThrough() { return doneBelow(); }

    /** Every GSN up to this one has finished here (committed, failed alike everywhere, or no transaction). */
    private long doneBelow() { return unfinished.isEmpty() ? orderedUpTo : unfinished.first() - 1; }

    /**
     * The highest GSN g such that every transaction delivered here up to g has finished here or is committing (all its
     * writes done, its COMMIT sent or about to be): one that wrote a row finished writing it before anything could lock
     * the row after it. A certifying block's statement that locked a row by key takes this, read after the statement
     * returned, as the row's position (see {@link Certifier}).
     */
    public synchronized long writtenThrough() {
        for (long g : unfinished) {
            Txn t = unfinishedTxns.get(g);
            if (t == null || t.state != Txn.State.COMMITTING) return g - 1;
        }
        return orderedUpTo;
    }

    /** Who waits in {@link #awaitFinishedThrough} for a GSN to have finished here (monitor). */
    private final java.util.TreeMap<Long, List<CompletableFuture<Void>>> finishWaiters = new java.util.TreeMap<>();

    /**
     * Waits (at most {@code timeout}) until every transaction delivered here up to {@code gsn}, a GSN delivered here
     * already, has finished here, so that a snapshot taken afterwards sees all of them. False on a timeout or when the
     * site stopped.
     */
    public boolean awaitFinishedThrough(long gsn, java.time.Duration timeout) throws InterruptedException {
        CompletableFuture<Void> f;
        synchronized (this) {
            if (doneBelow() >= gsn) return true;
            f = new CompletableFuture<>();
            finishWaiters.computeIfAbsent(gsn, g -> new ArrayList<>()).add(f);
        }
        try {
            f.get(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            return !stopped;
        } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
            synchronized (this) {
                List<CompletableFuture<Void>> l = finishWaiters.get(gsn);
                if (l != null && l.remove(f) && l.isEmpty()) finishWaiters.remove(gsn);
            }
            return false;
        }
    }

    /** Wakes the waiters of {@link #awaitFinishedThrough} whose GSN has finished (monitor held). */
    private void releaseFinishWaiters() {
        if (finishWaiters.isEmpty()) return;
        long done = doneBelow();
        while (!finishWaiters.isEmpty() && finishWaiters.firstKey() <= done)
            for (CompletableFuture<Void> f : finishWaiters.pollFirstEntry().getValue()) f.complete(null);
    }

    /** The statement recording {@code t}'s GSN in its local transaction, or null (monitor held). */
    private String positionSql(Txn t) {
        if (!recordPositions || t.gsn == 0) return null;
        return PositionSql.record(t.gsn, doneBelow(), ++records % 1000 == 0);
    }

    /** For an interactive block committed by its origin's client session: the statement recording its GSN, or null. */
    public synchronized String positionSql(RequestId block) {
        Txn t = txns.get(block);
        return t == null ? null : positionSql(t);
    }

    public void attach(Gcs g) {
        this.gcs = g;
        this.self = g.self();
    }

    /** New updates wait in {@link #submit} while {@code f} says a site's backlog is over its limit. */
    public void flowControl(FlowControl f) { this.flow = f; }

    /** The sites' comparison of outcomes, fed here with every ordered update's (see {@link OutcomeAudit}). */
    private volatile OutcomeAudit audit = OutcomeAudit.NONE;

    public void auditOutcomes(OutcomeAudit a) { this.audit = a; }

    public OutcomeAudit outcomeAudit() { return audit; }

    public FlowControl flowControl() { return flow; }

    /** The execution policy ({@code execution} setting). */
    public ExecutionPolicy policy() { return policy; }

    /**
     * The configured sites changed at {@code gsn} (delivery thread, before that change's ordered delivery; for a
     * joiner, the set in force when it joined): transactions finally delivered from now on name their executor
     * among these sites; earlier ones keep the policy of their delivery, so every site names the same executor
     * whenever it grants them.
     */
    @Override public synchronized void sitesChanged(List<String> sites, long gsn) {
        policy = policy.withSites(sites);
    }
    public Delivery delivery() { return delivery; }

    /**
     * Whether interactive blocks may commit by certification ({@code blocks: certify}) instead of the
     * exclusive lock; {@code window}: how many recent deliveries the certifier keeps. Set before start.
     */
    public synchronized void certification(boolean on, int window) {
        this.certifyBlocks = on;
        this.certifier = new Certifier(window);
    }

    /** Whether interactive blocks certify (see {@link #certification}). */
    public boolean certifiesBlocks() { return certifyBlocks; }

    /** A prepared transaction that a certified block of an earlier incarnation of this site left in the replica. */
    public record LeftPrepared(RequestId id, String gid, String database, String member) {}

    /** Commits or rolls back a prepared transaction of the replica (on a connection of its own). */
    public interface PreparedResolver { void resolve(String database, String gid, boolean commit) throws Exception; }

    /** What certified blocks of this site's earlier incarnation left in its replica. */
    private final LeftoverBlocks leftover;

    /**
     * What certified blocks of this site's earlier incarnation left in its replica: those it committed ({@code committed},
     * request ids), which a replay must not run again, and those it prepared, whose CERTIFY delivery commits or rolls
     * back when replayed; one never ordered is rolled back once a view without its member is here. Set before start.
     */
    public void recoverCertified(java.util.Collection<RequestId> committed, java.util.Collection<LeftPrepared> prepared, PreparedResolver resolver) {
        leftover.recover(committed, prepared, resolver);
    }

    /** How far back a restarted site learns the deliveries it has, to certify blocks whose snapshot is older than its restart. */
    static final int PRIME_DEPTH = 20_000;

    /** Where a restarted site's certifier learns the deliveries before its position (default: the catch-up source). */
    private volatile CatchUpSource certifierSource;

    /** Under write-set policies, which never replay the logs, the certifier still learns from them (see {@link #primeCertifier}). */
    public void primeCertifierFrom(CatchUpSource s) { this.certifierSource = s; }

    /**
     * A site that restarted (or took a copy) has not seen the deliveries its replica already has, and a block whose
     * snapshot precedes them could not be certified here (the site would stop). So before it replays or serves, its
     * certifier learns the last {@link #PRIME_DEPTH} of them from the others' logs, without running them: the same
     * window every other site keeps. If the logs do not have them, it goes without (and stops at such a block, as before).
     */
    private void primeCertifier(GcsView v) {
        CatchUpSource source = certifierSource != null ? certifierSource : catchUpSource;
        if (!certifyBlocks || source == null || lastGsn <= 0) return;
        // up to the GSN before the next one this engine will be delivered: the replay's first (lastGsn + 1), or, when a
        // copy reaches beyond this view's first GSN, that GSN (the group delivers it again, skipped as in the copy).
        // The certifier must see each delivery once: a block certified again would count writes delivered after it
        long to = Math.min(lastGsn, v.firstGsn() - 1);
        if (to <= 0) return;
        int capacity;
        synchronized (this) {
            if (certifier.lastSeen() >= to) return;
            capacity = certifier.capacity();
        }
        long from = Math.max(1, to + 1 - Math.min(capacity, PRIME_DEPTH)), next;
        Certifier c = new Certifier(capacity);
        try {
            // fed as ordered() feeds it (a gap in the logs moves the start of its knowledge: Certifier.seen)
            next = source.scan(v, from, to, e -> {
                if (e.isView()) return;
                TxnRequest r = TxnRequestCodec.decode(e.payload());
                switch (r.kind()) {
                    case AUTOCOMMIT -> c.delivered(e.gsn(), r.tables());
                    case EXCLUSIVE -> c.delivered(e.gsn(), TableSet.allTables());
                    case CERTIFY -> { if (c.certify(e.gsn(), r.snapshotGsn(), r.tables(), r.rowPositions()) == null) c.unknownThrough(e.gsn()); }
                    default -> c.seen(e.gsn());
                }
            });
        } catch (Exception e) {
            LOG.warn("site {}: could not learn the deliveries before GSN {} from the others' logs ({}): blocks whose snapshot precedes them stop this site",
                    site, to + 1, e.getMessage());
            return;
        }
        if (next <= to) {
            LOG.warn("site {}: the others' logs end before GSN {}: its certifier knows deliveries from GSN {} only", site, to, from);
            return;
        }
        synchronized (this) {
            if (certifier.lastSeen() < to) certifier = c;
        }
        LOG.info("site {}: certifier learned GSNs {} to {} from the others' logs", site, from, to);
    }

    /** Prepared transactions left by an earlier incarnation and not yet resolved (tests, SHOW). */
    public int leftPrepared() { return leftover.size(); }

    /**
     * A certified block's CERTIFY delivered here: certified in order like every other site, then run (replayed, or this
     * origin's prepared transaction committed under its locks) or skipped if the replica has it already. Monitor held;
     * returns the origin's future to complete if it aborted (outside the monitor).
     */
    private CompletableFuture<Txn> orderedCertify(TxnRequest r, String sender, long gsn, boolean inState, boolean committedBefore, Txn[] abortedTxn) {
        Certifier.Decision d = certifier.certify(gsn, r.snapshotGsn(), r.tables(), r.rowPositions());
        if (d == null) {
            // what was delivered between its snapshot and this site's restart is unknown here:
            // another site may decide otherwise, so this one must not decide at all
            fail("site " + site + " cannot certify block " + r.id() + " (GSN " + gsn + "): its snapshot (GSN "
                    + r.snapshotGsn() + ") precedes the deliveries this site has seen since it started");
            return null;
        }
        LeftoverBlocks.Found found = leftover.take(r.id());
        LeftPrepared left = found.prepared();
        boolean marked = found.committed();
        boolean committedHere = committedBefore || marked;
        if (inState || committedHere) {
            // its outcome is in the copy, or it committed here (as the origin, marked; or replayed, its GSN recorded)
            // before a restart: nothing runs, the certifier has recorded it as every site has
            if (committedHere && !d.commit()) {
                fail("site " + site + "'s replica has certified block " + r.id() + " (GSN " + gsn + ") which every site's certification aborts now ("
                        + d.reason() + "): this replica no longer follows the others");
                return null;
            }
            (d.commit() ? certifiedCommits : certificationAborts).incrementAndGet();
            LOG.debug("{} gsn {} certified block {}: its outcome is in the replica already", site, gsn, r.id());
            return null;
        }
        Txn t = newTxn(r, sender);
        t.gsn = gsn;
        t.fin = true;
        t.phases.finalDelivered = System.nanoTime();
        t.certification = d;
        if (d.commit()) {
            certifiedCommits.incrementAndGet();
            unfinished.add(gsn);
            unfinishedTxns.put(gsn, t);
            // a block this site prepared before it restarted: COMMIT PREPARED in its turn; else what the other sites apply
            // (the write set its origin captured at PREPARE) or replay (its statement log, when it carries no write set)
            t.work = left != null ? r.committingPrepared(left.gid(), left.database()) : r.asStatementLog();
            t.resolvesPrepared = left != null;
            if (left == null && !t.origin && r.writeSet().length > 0) {
                try {
                    writeSets.put(r.id(), WriteSetMessageCodec.decode(r.writeSet()));
                } catch (RuntimeException e) {
                    fail("site " + site + " cannot decode the write set of certified block " + r.id() + " (GSN " + gsn + "): " + e);
                    return null;
                }
                certifiedApplied.incrementAndGet();
            } else if (left == null && !t.origin) certifiedReplayed.incrementAndGet();
            locks.enqueueFinal(r.id(), r.tables());
            return null;
        }
        certificationAborts.incrementAndGet();
        if (r.id().site().equals(site)) ownCertificationAborts.incrementAndGet();
        LOG.debug("{} gsn {} block {} aborted by certification: {}", site, gsn, r.id(), d.reason());
        // as its origin does: at once, not in lock order (what was delivered before it may wait on its rows in PostgreSQL)
        if (left != null) leftover.resolveNow(left, false, "its certification aborted it");
        t.state = Txn.State.FAILED;
        txns.remove(r.id());
        submittedHere.remove(r.id());
        abortedTxn[0] = t;
        return waiting.remove(r.id());
    }

    /**
     * The highest GSN g such that every transaction delivered at a GSN up to g has finished (committed,
     * or failed for good) here: a snapshot taken after this call sees all of them. A block certifies
     * against everything delivered after it (some of which it may see too: that only aborts more).
     */
    public synchronized long committedThrough() {
        return doneBelow();
    }

    /** Blocks certified and committed / aborted by certification at this site (each site decides alike). */
    public long certifiedCommits() { return certifiedCommits.get(); }
    public long certificationAborts() { return certificationAborts.get(); }
    /** Blocks of this site's clients aborted by certification. */
    public long ownCertificationAborts() { return ownCertificationAborts.get(); }
    /** Other sites' certified blocks applied here from the write set in their CERTIFY / replayed from their statement log. */
    public long certifiedWriteSetsApplied() { return certifiedApplied.get(); }
    public long certifiedLogsReplayed() { return certifiedReplayed.get(); }

    /** This site's group member name. */
    public String self() { return self; }

    /**
     * What to do when this replica can no longer follow the others (a write set committed here that
     * cannot be shipped, one that cannot be applied): the site stops, so the others go on without it.
     */
    public void onFatal(java.util.function.Consumer<String> f) {
        String earlier;
        synchronized (fatalLock) {
            fatal = f;
            earlier = failure;
        }
        // a failure before the handler existed (e.g. while the site waited for the primary component) still stops it
        if (earlier != null) f.accept(earlier);
    }

    /**
     * This replica can no longer follow the others: it stops processing deliveries at once and the
     * site stops (see {@link #onFatal}); clients of this site get nothing more from its replica.
     */
    public void fail(String reason) {
        java.util.function.Consumer<String> f;
        synchronized (fatalLock) {
            if (failure == null) failure = reason;
            f = fatal;
        }
        f.accept(reason);
    }

    /** Why this replica stopped following the others, or null. */
    public String failure() { return failure; }

    private volatile boolean stopped;

    /**
     * Whether the site is stopping or stopped ({@link #shutdown}): the requests it still waited for fail here, but may
     * well be ordered and decided by the others (a certified block's prepared transaction must then stay prepared).
     */
    public boolean stopped() { return stopped || failure != null; }

    /**
     * Whether this site may answer from its replica now: it has not failed, and its group member is
     * sure no primary component exists without it (see {@link Gcs#current()}).
     */
    public boolean current() {
        Gcs g = gcs;
        // the member's lease, and the engine has accepted the member's latest view: a member back in a new view
        // renews its lease within a round trip, before the engine has found that it missed transactions
        if (failure != null || g == null || !g.current() || acceptedView != g.view()) return false;
        if (draining) {
            // after a catch-up: what was delivered behind it meanwhile is worked off before the site serves again
            if (g.queuedDeliveries() > DRAINED || pending() > DRAINED) return false;
            draining = false;
            LOG.info("site {} serves again: caught up with the others", site);
        }
        return true;
    }

    /**
     * Whether an autocommit update may be taken now although this site's read lease ran out (a member of
     * its view is paused or cut off and not yet excluded): under uniform delivery and symmetric execution
     * its answer comes only after a majority of the primary component holds it and this replica ran it in
     * its place in the total order, so it is right without the lease, and the majority keeps acknowledging
     * updates while the minority member is silent. Under agreed delivery a cut-off sequencer could deliver
     * it alone, and under a write-set policy another site's write set decides it: there the lease holds.
     */
    public boolean ordersUpdatesWithoutLease() {
        Gcs g = gcs;
        if (!delivery.uniform() || policy.kind() != ExecutionPolicy.Kind.SYMMETRIC) return false;
        if (failure != null || g == null || catchingUp) return false;
        var v = g.view();
        return v != null && v.primary() && acceptedView == v;
    }

    /** After a catch-up, the site serves again once this few deliveries wait behind. */
    private static final int DRAINED = 20;
    private volatile boolean draining;

    /**
     * Waits up to {@code timeout} for {@link #current()} (a lease renews within a heartbeat; a view change
     * after a member's crash takes a moment): a brief gap makes a client wait rather than fail.
     */
    public boolean awaitCurrent(java.time.Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (!current()) {
            if (failure != null || System.nanoTime() >= end) return false;
            Thread.sleep(5);
        }
        return true;
    }

    public RequestId nextId() { return new RequestId(site, seq.incrementAndGet()); }

    /**
     * Request numbers start above {@code n}: a site started again must not reuse its earlier incarnation's
     * numbers (the others may still hold one of its blocks, and a replica records applied requests by them).
     */
    public void startIdsAt(long n) { seq.set(n); }

    public GcsView view() { return view; }

    /** The group member this engine multicasts through. */
    public Gcs gcs() { return gcs; }

    /**
     * Multicasts an update transaction from this site. The future completes with the transaction
     * after its local COMMIT (its replies are then with the executor's attachment), or exceptionally
     * if it cannot be ordered.
     */
    public CompletableFuture<Txn> submit(TxnRequest r) { return submit(r, null); }

    /**
     * Flow control for work that is not a request yet (a certifying block's first write): waits, bounded, until no site
     * of the view is over its backlog limit; throws {@link FlowControl.Throttled} (53400) if none comes in time.
     */
    public void admitNewWork() throws FlowControl.Throttled, java.io.InterruptedIOException {
        try {
            flow.admit(() -> view);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted waiting for flow control");
        }
    }

    /**
     * Like {@link #submit(TxnRequest)}; {@code work} becomes the origin transaction's executor
     * attachment (e.g. the client's own backend and its original messages). For an {@code EXCLUSIVE}
     * request the future completes when the lock is granted here; for a {@code STATEMENT_LOG} when the
     * log is delivered and the origin may commit (then call {@link #blockCommitted}); for a
     * {@code RELEASE} when it is delivered.
     */
    public CompletableFuture<Txn> submit(TxnRequest r, Object work) {
        CompletableFuture<Txn> f = new CompletableFuture<>();
        if (failure != null) {
            f.completeExceptionally(new IllegalStateException("site " + site + " stopped following the others: " + failure));
            return f;
        }
        // flow control: only new work waits. A block's log or release ends work that already holds locks, and so does a
        // CERTIFY: its prepared transaction holds rows that an update delivered before it may need here, and that update's
        // backlog would then never drain while the CERTIFY waits for it (a certifying block is admitted at its first
        // write instead: admitNewWork)
        if (r.kind() == TxnRequest.Kind.AUTOCOMMIT || r.kind() == TxnRequest.Kind.EXCLUSIVE) {
            try {
                flow.admit(() -> view);
            } catch (FlowControl.Throttled e) {
                f.completeExceptionally(e);
                return f;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                f.completeExceptionally(e);
                return f;
            }
        }
        synchronized (this) {
            waiting.put(r.id(), f);
            submittedHere.put(r.id(), r);
            if (work != null) originWork.put(r.id(), work);
            if (r.kind() == TxnRequest.Kind.AUTOCOMMIT || r.kind() == TxnRequest.Kind.EXCLUSIVE || r.kind() == TxnRequest.Kind.CERTIFY)
                submitTimes.put(r.id(), System.nanoTime());
        }
        try {
            MsgId m = gcs.multicast(TxnRequestCodec.encode(r), delivery);
            synchronized (this) { if (waiting.containsKey(r.id())) byMsg.put(m, r.id()); }
        } catch (RuntimeException e) {
            synchronized (this) {
                if (endsBlock(r)) unreleased.put(r.id(), r);
                waiting.remove(r.id());
                submittedHere.remove(r.id());
                originWork.remove(r.id());
                submitTimes.remove(r.id());
            }
            f.completeExceptionally(e);
        }
        return f;
    }

    // ------------------------------------------------------------------ deliveries

    @Override public void optimistic(GcsMessage m) {
        if (failure != null) return;   // fail-stop: a failed replica does nothing more
        TxnRequest r = TxnRequestCodec.decode(m.payload());
        if (r.kind() != TxnRequest.Kind.AUTOCOMMIT) return;   // blocks act on final delivery only
        synchronized (this) {
            Txn t = newTxn(r, m.sender());
            t.phases.optDelivered = System.nanoTime();
            locks.enqueueTentative(r.id(), r.tables());
        }
    }

    @Override public void ordered(GcsMessage m, long gsn) {
        if (failure != null) return;
        if (!recentlyOrdered.add(m.id())) {
            // the total order handed us a message twice (seen with agreed delivery at a cut-off sequencer that
            // delivered its own message before the flush delivered it again): running it twice would diverge
            fail("site " + site + " was delivered " + m.id() + " a second time (GSN " + gsn + "): this replica no longer follows the others");
            return;
        }
        HistoryMarker hm = historyMarker;
        if (hm != null && !historyMarked && !recordPositions) {
            // before anything of this history reaches the replica: a restart must know it may hold deliveries
            try {
                hm.mark();
            } catch (Exception e) {
                fail("site " + site + " cannot record in its replica that it takes part in the group's history: " + e.getMessage());
                return;
            }
            historyMarked = true;
            unrecordedHistory = true;
        }
        OrderedLog l = log;
        if (l != null) l.ordered(gsn, m.id(), m.payload());
        TxnRequest r = TxnRequestCodec.decode(m.payload());
        lastGsn = gsn;
        CompletableFuture<Txn> aborted = null;
        Txn abortedTxn = null;
        synchronized (this) {
            orderedUpTo = gsn;
            byMsg.remove(m.id());
            certifier.seen(gsn);
            audit.seen(gsn);
            boolean inState = gsn <= skipUpTo, committedBefore = !alreadyHave.isEmpty() && alreadyHave.contains(gsn);
            if (inState || committedBefore) audit.skipped(gsn);   // its outcome here is not this site's to compare
            if (inState && (r.kind() == TxnRequest.Kind.AUTOCOMMIT || r.kind() == TxnRequest.Kind.EXCLUSIVE)) {
                certifier.delivered(gsn, r.kind() == TxnRequest.Kind.AUTOCOMMIT ? r.tables() : TableSet.allTables());
                Txn tentative = txns.get(r.id());
                if (tentative != null && !tentative.fin) abandon(tentative);
                LOG.debug("{} gsn {} {}: in the state transferred here already", site, gsn, r.id());
                return;
            }
            if (committedBefore) alreadyHave.remove(gsn);
            if (committedBefore && (r.kind() == TxnRequest.Kind.AUTOCOMMIT || r.kind() == TxnRequest.Kind.EXCLUSIVE)) {
                certifier.delivered(gsn, r.kind() == TxnRequest.Kind.AUTOCOMMIT ? r.tables() : TableSet.allTables());
                LOG.debug("{} gsn {} {}: committed here before the site stopped; not again", site, gsn, r.id());
                return;
            }
            switch (r.kind()) {
                case AUTOCOMMIT -> {
                    certifier.delivered(gsn, r.tables());
                    orderedAutocommit(r, m.sender(), gsn);
                }
                case EXCLUSIVE -> {
                    certifier.delivered(gsn, TableSet.allTables());
                    Txn t = newTxn(r, m.sender());
                    t.gsn = gsn;
                    unfinished.add(gsn);
                    unfinishedTxns.put(gsn, t);
                    t.fin = true;
                    t.phases.finalDelivered = System.nanoTime();
                    locks.enqueueFinal(r.id(), TableSet.allTables());
                }
                case STATEMENT_LOG, RELEASE, WRITESET_LOG -> blockEnds(r);
                case SITES -> LOG.info("{} gsn {}: configured sites changed ({})", site, gsn, r.id());
                case CERTIFY -> {
                    Txn[] a = new Txn[1];
                    aborted = orderedCertify(r, m.sender(), gsn, inState, committedBefore, a);
                    abortedTxn = a[0];
                }
            }
        }
        if (aborted != null) aborted.complete(abortedTxn);   // the origin rolls its prepared transaction back
    }

    private void orderedAutocommit(TxnRequest r, String sender, long gsn) {
        Txn t = txns.get(r.id());
        if (t == null) {
            t = newTxn(r, sender);
            t.gsn = gsn;
            unfinished.add(gsn);
            unfinishedTxns.put(gsn, t);
            t.deliveryMembers = view.members();
            t.deliveryPolicy = policy;
            t.fin = true;
            t.phases.finalDelivered = System.nanoTime();
            locks.enqueueFinal(r.id(), r.tables());
        } else {
            t.abandoned = false;   // ordered after all (it may still be rolling back: then it runs again)
            t.gsn = gsn;
            unfinished.add(gsn);
            unfinishedTxns.put(gsn, t);
            t.deliveryMembers = view.members();
            t.deliveryPolicy = policy;
            t.fin = true;
            t.phases.finalDelivered = System.nanoTime();
            locks.makeFinal(r.id());
            if (roleChangedAtFinal(t)) return;
            if (t.state == Txn.State.EXECUTED) { if (inTurn(t)) commit(t); }
            else if (t.state == Txn.State.AWAITING_WRITE_SET) tryApply(t);
            else if (t.state == Txn.State.WAITING && locks.isGranted(r.id()) && revokedRollingBack.isEmpty()
                    && !grantsHeld.contains(r.id())) run(t);   // held back while this site was outside the primary component
        }
    }

    /**
     * A transaction granted before its final delivery took its role (execute here, or wait for the
     * write set) from the view then; the final one decides. If a view change in between moved its
     * executor, undo what this site started and take the right role.
     */
    private boolean roleChangedAtFinal(Txn t) {
        if (!policy.shipsWriteSet(t.request) || t.executor == null) return false;
        if (!locks.isGranted(t.request.id())) return false;
        String exec = executorOf(t);
        if (exec.equals(t.executor)) return false;
        LOG.info("{}: executor is {} in the final delivery's view, not {}", t, exec, t.executor);
        switch (t.state) {
            case AWAITING_WRITE_SET -> run(t);
            case RUNNING -> {
                t.state = Txn.State.ROLLING_BACK;
                executor.cancel(t);
            }
            case EXECUTED -> rollback(t);
            default -> { return false; }
        }
        return true;
    }

    /** A block's statement log or release arrived: it runs (or ends) once the block's lock is held. */
    private void blockEnds(TxnRequest log) {
        Txn t = txns.get(log.id());
        if (t == null) {   // its EXCLUSIVE was dropped when the origin left: cannot happen before the log
            LOG.warn("{} for an unknown block {}: ignored", log.kind(), log.id());
            CompletableFuture<Txn> f = waiting.remove(log.id());
            if (f != null) f.completeExceptionally(new IllegalStateException("block " + log.id() + " is unknown at " + site));
            return;
        }
        t.work = log;
        if (t.state == Txn.State.HELD) proceedBlock(t);
    }

    private void proceedBlock(Txn t) {
        if (t.work.kind() == TxnRequest.Kind.RELEASE) {
            t.state = Txn.State.FAILED;
            finish(t);
        } else if (t.origin) {
            // the origin ran the block already: its client's COMMIT may go now; blockCommitted() ends it
            t.state = Txn.State.COMMITTING;
            CompletableFuture<Txn> f = waiting.remove(t.request.id());
            if (f != null) f.complete(t);
        } else if (t.work.kind() == TxnRequest.Kind.WRITESET_LOG) {
            applyWriteSet(t, WriteSetMessageCodec.decode(t.work.writeSet()));
        } else {
            run(t);
        }
    }

    /** The origin committed (or failed to commit) its block after the log was delivered: release the lock. */
    public synchronized void blockCommitted(RequestId id, boolean committed) {
        Txn t = txns.get(id);
        if (t == null) return;
        t.phases.committed = System.nanoTime();
        t.state = committed ? Txn.State.COMMITTED : Txn.State.FAILED;
        if (committed) commits.incrementAndGet();
        if (LOG.isDebugEnabled()) LOG.debug("{} gsn {} {} block {} (origin)", site, t.gsn, id, t.state);
        finish(t);
    }

    private Txn newTxn(TxnRequest r, String sender) {
        boolean origin = r.id().site().equals(site) && waiting.containsKey(r.id());
        Txn t = new Txn(r, origin);
        t.originMember = sender;
        if (origin) t.attachment = originWork.remove(r.id());
        TxnRequest mine = submittedHere.get(r.id());
        Long submitted = submitTimes.remove(r.id());
        if (mine != null && submitted != null) t.phases.submitted = submitted;
        txns.put(r.id(), t);
        return t;
    }

    /** The last view this engine fully accepted: a site answers only in it (see {@link #current()}). */
    private volatile GcsView acceptedView;

    /** The last view this engine accepted (null before its first). */
    public GcsView acceptedView() { return acceptedView; }

    @Override public void viewChanged(GcsView v) {
        if (failure != null) return;
        viewChangedChecked(v);
        OrderedLog l = log;
        if (failure == null && v.primary() && l != null) l.view(v.firstGsn() - 1, v.members());
        if (failure == null) acceptedView = v;
    }

    private void viewChangedChecked(GcsView v) {
        GcsView before = view;
        view = v;
        if (!v.primary()) {
            if (before != null && before.primary()) {
                if (clusterStopping) LOG.info("site {} left the primary component while the whole cluster stops ({})", site, v);
                else LOG.warn("site {} left the primary component ({}): update transactions fail until it is back", site, v);
            }
            endTentativeAttempts();
            return;
        }
        HistoryMarker hm = historyMarker;
        if (!sawPrimary && !v.joined() && hm != null && unrecordedHistory && !recordPositions) {
            // a new process that does not join: it founds a new history with its replica as it is
            try {
                hm.clear();
            } catch (Exception e) {
                fail("site " + site + " cannot reset its replica's history marker: " + e.getMessage());
                return;
            }
            unrecordedHistory = false;
        }
        sawPrimary = true;
        java.util.function.Consumer<Boundary> js = joinerSnapshots;
        // (not before anything was ordered: a site that starts a moment after the others formed the group joins at GSN 1
        // and mostly needs no copy; one that does gets a snapshot taken when asked, see exec.SnapshotExport.prepared)
        if (!v.joined() && js != null && lastPrimaryMembers != null && policy.kind() != ExecutionPolicy.Kind.SYMMETRIC
                && v.firstGsn() > 1 && !lastPrimaryMembers.containsAll(v.members()))
            js.accept(queueBoundary());   // every delivery of the last view is ordered here, none of this one: GSN F-1
        lastPrimaryMembers = v.members();
        OrderedLog l = log;
        if (!v.joined() && l != null && v.firstGsn() <= l.last()) l.clear();   // a new history (below): the old log means nothing
        if (!v.joined() && recordPositions && v.firstGsn() <= lastGsn) {
            // every site started afresh: a new group history whose GSNs count from 1 again
            LOG.warn("site {}: the group starts a new history at GSN {}; this replica had recorded up to GSN {}: positions reset",
                    site, v.firstGsn(), lastGsn);
            newHistory.run();
            synchronized (this) {
                lastGsn = orderedUpTo = v.firstGsn() - 1;
                alreadyHave.clear();
            }
        }
        // agreed delivery is not uniform: what this member delivered last (e.g. as a cut-off sequencer) may not be
        // what the others ordered at the same GSNs, so its replica is replaced by a serving site's copy first
        boolean replace = v.joined() && !delivery.uniform() && lastGsn > 0 && stateTransfer != null;
        // a new, empty site under agreed delivery: a copy first too (catchUp's new-site transfer)
        boolean newSiteUnderAgreed = !delivery.uniform() && newSite && lastGsn == 0;
        // write-set policies record no position and cannot replay the log (a replayed write set's executor depends on
        // views this member did not see): back in the primary component with any history, or new, it takes a copy at
        // exactly the view's first GSN - 1, prepared for it by the serving sites (see snapshotsForJoiners)
        boolean writeSetTransfer = v.joined() && policy.kind() != ExecutionPolicy.Kind.SYMMETRIC && stateTransfer != null
                && (lastGsn > 0 || unrecordedHistory || newSite || v.firstGsn() > 1);
        if (writeSetTransfer) {
            replace = true;
            catchUp(v, true);
            if (failure != null) return;
        } else if (v.joined() && (v.firstGsn() > lastGsn + 1 || replace) && catchUpSource != null
                && (delivery.uniform() || replace || newSiteUnderAgreed)
                && policy.kind() == ExecutionPolicy.Kind.SYMMETRIC && recordPositions) {
            catchUp(v, replace);
            if (failure != null) return;
            replace |= newSiteUnderAgreed;   // its replica is now a copy at a uniform GSN, as a replaced one is
        } else replace = false;
        if (v.joined() && failure == null) primeCertifier(v);   // restarted with nothing to catch up: it still certifies against the past
        if (v.joined() && v.firstGsn() > lastGsn + 1) {
            // back in the primary component (after a partition, or started late) without what the others
            // ordered meanwhile: serving from this replica would silently diverge
            fail("site " + site + " re-entered the primary component at GSN " + v.firstGsn() + " but last delivered GSN " + lastGsn
                    + ": its replica lacks " + (v.firstGsn() - 1 - lastGsn) + " transactions the others committed. It stops; rebuild its replica"
                    + " from another site's (state transfer is not implemented yet) and start it again.");
            return;
        }
        if (v.joined() && !delivery.uniform() && !replace && !recordPositions && unrecordedHistory) {
            // its replica's position is not recorded (write-set policies), so lastGsn 0 says nothing: a restarted
            // cut-off sequencer may hold deliveries that a primary component which ordered nothing since never had
            fail("site " + site + " re-entered the primary component at GSN " + v.firstGsn() + " with a replica that took part in the"
                    + " group's history, whose position it does not record (write-set policies), with " + delivery.label()
                    + " delivery, which is not uniform: it may hold transactions the others never ordered. It stops;"
                    + " rebuild its replica from another site's (state transfer is not implemented yet) and start it again.");
            return;
        }
        if (v.joined() && !delivery.uniform() && lastGsn > 0 && !replace) {
            // agreed delivery is not uniform: what this member delivered outside the primary component (e.g. as
            // its sequencer) may not be what the others ordered at the same GSNs, even if the counts line up
            fail("site " + site + " re-entered the primary component at GSN " + v.firstGsn() + " after delivering up to GSN " + lastGsn
                    + " with " + delivery.label() + " delivery, which is not uniform: its last transactions may not be the others'. It stops;"
                    + " rebuild its replica from another site's (state transfer is not implemented yet) and start it again.");
            return;
        }
        RequestId lacking = v.joined() ? writeSetShippedWhileAway() : null;
        if (lacking != null) {
            fail("site " + site + " re-entered the primary component and still needs the write set of " + lacking
                    + ", which its executor may have shipped while this site was away (write sets are not retransmitted to a member"
                    + " that rejoins). It stops; rebuild its replica from another site's (state transfer is not implemented yet) and start it again.");
            return;
        }
        synchronized (this) {
            // a member that rejoined gave up its history: an optimistic delivery of it that was not ordered never
            // will be in this one (if the new primary orders the message after all, its final delivery starts afresh)
            if (v.joined())
                for (Txn t : new ArrayList<>(txns.values()))
                    if (!t.fin && t.request.kind() == TxnRequest.Kind.AUTOCOMMIT) abandon(t);
            // write sets of transactions never delivered here: their executor delivered what we did not
            // (possible with agreed delivery only); all old-view deliveries are done, they cannot come
            writeSets.keySet().removeIf(id -> {
                if (txns.containsKey(id)) return false;
                LOG.warn("write set of {} from {} for a transaction this site never delivered: dropped", id, writeSets.get(id).executor());
                return true;
            });
            // an executor that left before shipping: every survivor names the same new one (see ExecutionPolicy)
            for (Txn t : new ArrayList<>(txns.values())) {
                if (t.state == Txn.State.AWAITING_WRITE_SET && t.executor != null && !v.members().contains(t.executor)
                        && !writeSets.containsKey(t.request.id())) {
                    LOG.info("{}: its executor {} left before shipping the write set: executed by {}", t, t.executor, executorOf(t));
                    run(t);
                }
            }
            // a block whose origin left before its log arrived never commits anywhere: drop its lock
            for (Txn t : new ArrayList<>(txns.values())) {
                if (t.request.kind() == TxnRequest.Kind.EXCLUSIVE && t.work == t.request && !t.origin
                        && t.originMember != null && !v.members().contains(t.originMember)) {
                    LOG.info("{}: origin {} left before the block's log arrived: lock released", t, t.originMember);
                    t.state = Txn.State.FAILED;
                    finish(t);
                }
            }
        }
        resumeTentative();
        leftover.resolveNeverOrdered(v);
        // a block of ours whose log or release could not be ordered (this site was outside the primary component)
        // holds the all-tables lock wherever its EXCLUSIVE was delivered, and its origin is still a member: release it
        List<TxnRequest> again;
        synchronized (this) {
            again = new ArrayList<>(unreleased.values());
            unreleased.clear();
        }
        for (TxnRequest r : again) {
            LOG.info("block {}: its {} could not be ordered; releasing it", r.id(), r.kind());
            submit(new TxnRequest(r.id(), TxnRequest.Kind.RELEASE, TableSet.allTables(), r.database(), List.of(), 0, 0));
        }
    }

    /**
     * Opt-safe: this site left the primary component. Its tentative attempts would keep their transactions
     * open on the backends (a client's own included) until it is back, maybe for ever: they are rolled back
     * now and wait, still queued, for a primary view (where they are ordered, or dropped if it rejoins).
     */
    private synchronized void endTentativeAttempts() {
        for (Txn t : new ArrayList<>(txns.values())) {
            if (t.fin || t.request.kind() != TxnRequest.Kind.AUTOCOMMIT) continue;
            switch (t.state) {
                case RUNNING -> {
                    LOG.info("{}: tentative attempt ended, the site left the primary component", t);
                    t.state = Txn.State.ROLLING_BACK;
                    executor.cancel(t);
                }
                case EXECUTED -> {
                    LOG.info("{}: tentative attempt rolled back, the site left the primary component", t);
                    rollback(t);
                }
                default -> { }
            }
        }
    }

    /** Back in a primary view: the tentative transactions held back outside it run again once granted. */
    private synchronized void resumeTentative() {
        if (!revokedRollingBack.isEmpty()) return;   // they run when the rollbacks return (grantsHeld)
        for (Txn t : new ArrayList<>(txns.values()))
            if (!t.fin && !t.abandoned && t.request.kind() == TxnRequest.Kind.AUTOCOMMIT && t.state == Txn.State.WAITING
                    && locks.isGranted(t.request.id()) && !grantsHeld.contains(t.request.id())) run(t);
    }

    /** Transactions replayed while catching up that may wait for their locks or run at once. */
    private static final int CATCH_UP_BACKLOG = 500;

    /**
     * Catch-up: this member is back in the primary component at GSN {@code v.firstGsn()} without what was
     * ordered since its last GSN g. It fetches GSN g+1 to firstGsn-1 from a serving site's log and delivers
     * them to itself in order, exactly as they were delivered there (the views between them included), under
     * the same rules; the new view's deliveries wait behind on the delivery thread. The site serves again once
     * every replayed transaction finished ({@link #current()} needs this view accepted).
     */
    private void catchUp(GcsView v, boolean replace) {
        long target = v.firstGsn() - 1;
        catchUpTarget = target;
        catchingUp = true;
        long start = System.nanoTime(), from = lastGsn;
        LOG.info("site {} re-entered the primary component at GSN {} with its replica at GSN {}: {}",
                site, v.firstGsn(), lastGsn, policy.kind() != ExecutionPolicy.Kind.SYMMETRIC ? "state transfer (" + policy.kind() + " execution)"
                        : replace ? "state transfer (" + delivery.label() + " delivery is not uniform)"
                        : "catching up " + (target - lastGsn) + " transactions");
        try {
            boolean transferred = false;
            if (replace) {
                transferState(v, true);
                transferred = true;
                from = Math.min(from, lastGsn);
            } else if (newSite && lastGsn == 0 && stateTransfer != null) {
                LOG.info("site {} is new to the cluster: state transfer", site);
                transferState(v, false);
                transferred = true;
            } else if (stateTransfer != null && target > lastGsn) {
                long bytes = stateTransfer.replicaBytes();
                CatchUpChoice c = catchUpChoice;
                if (c.copyFirst(target - lastGsn, bytes)) {
                    LOG.info("site {}: a state transfer (~{} s for {} MB) should end before a replay of {} transactions (~{} s)", site,
                            Math.round(c.transferSeconds(bytes)), bytes >> 20, target - lastGsn, Math.round(c.replaySeconds(target - lastGsn)));
                    long t0 = System.nanoTime();
                    transferState(v, false);
                    transferred = true;
                    c.transferred(bytes, (System.nanoTime() - t0) / 1_000_000);
                }
            }
            if (lastGsn < target && policy.kind() != ExecutionPolicy.Kind.SYMMETRIC)
                throw new IllegalStateException("the copy has every GSN up to " + lastGsn + " only; write sets up to " + target + " cannot be replayed");
            primeCertifier(v);
            leftover.rollBackUnordered(v, catchUpSource, lastGsn + 1, target);
            while (lastGsn < target && failure == null) {
                List<OrderedLog.Entry> es;
                try {
                    es = catchUpSource.fetch(v, lastGsn + 1, target, 2000);
                } catch (Exception e) {
                    if (stateTransfer == null || transferred) throw e;
                    LOG.warn("site {} cannot catch up from the logs ({}): state transfer", site, e.getMessage());
                    transferState(v, false);
                    transferred = true;
                    continue;
                }
                if (es.isEmpty()) throw new IllegalStateException("no site returned GSN " + (lastGsn + 1));
                for (OrderedLog.Entry e : es) {
                    if (failure != null) return;
                    if (e.isView()) {
                        replayView(e.members());
                        continue;
                    }
                    if (e.gsn() <= lastGsn) continue;
                    if (e.gsn() != lastGsn + 1) throw new IllegalStateException("the log served GSN " + e.gsn() + " after " + lastGsn);
                    synchronized (this) {
                        while (txns.size() >= CATCH_UP_BACKLOG && failure == null) wait(100);
                    }
                    ordered(new GcsMessage(new MsgId(e.sender(), e.seq()), delivery, e.payload()), e.gsn());
                }
            }
            synchronized (this) {
                while (failure == null && !unfinished.isEmpty() && unfinished.first() <= target) wait(100);
            }
            long ms = (System.nanoTime() - start) / 1_000_000;
            if (failure == null) lastCatchUp = new CatchUp(target - from, ms);
            if (failure == null && !transferred) catchUpChoice.replayed(target - from, ms);
            if (failure == null)
                LOG.info("site {} caught up: {} transactions in {} ms ({} per second)", site, target - from, ms, (target - from) * 1000 / Math.max(1, ms));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail("site " + site + " was interrupted while catching up");
        } catch (Exception e) {
            fail("site " + site + " re-entered the primary component at GSN " + v.firstGsn() + " with its replica at GSN " + lastGsn
                    + " and could not catch up: " + e.getMessage() + ". It stops; its replica needs a state transfer from another site's.");
        } finally {
            synchronized (this) { alreadyHave.clear(); }
            if (failure == null) draining = true;
            catchingUp = false;
        }
    }

    /**
     * Replaces the replica by a serving site's copy at some GSN x (maybe beyond this view's first GSN: the
     * deliveries up to x are then skipped). Nothing of this site may run meanwhile: what was fed finishes,
     * tentative work of the history it gave up is dropped.
     */
    private void transferState(GcsView v, boolean replace) throws Exception {
        synchronized (this) {
            for (Txn t : new ArrayList<>(txns.values())) if (!t.fin && t.request.kind() == TxnRequest.Kind.AUTOCOMMIT) abandon(t);
            while (failure == null && !txns.isEmpty()) {
                if (policy.kind() != ExecutionPolicy.Kind.SYMMETRIC) dropWaitingForOldViews();
                if (!txns.isEmpty()) wait(100);
            }
        }
        leftover.rollBackAll();
        long start = System.nanoTime(), x;
        transferring = true;
        transfers++;   // only the delivery thread writes it
        try {
            x = stateTransfer.transfer(v);
        } finally {
            transferring = false;
        }
        synchronized (this) {
            // replacing a replica whose last deliveries may not be the group's: its own count means nothing now
            lastGsn = orderedUpTo = replace ? x : Math.max(lastGsn, x);
            skipUpTo = x;
            alreadyHave.clear();
            // the group may deliver again (up to x, skipped) a message this member had delivered on its own
            if (replace) recentlyOrdered.clear();
        }
        OrderedLog l = log;
        if (replace && l != null) l.clear();   // it must never serve its own history to a site catching up
        Runnable hook = transferHook;
        if (hook != null) hook.run();
        lastTransfer = new CatchUp(x, (System.nanoTime() - start) / 1_000_000);
        LOG.info("site {}: state transferred, its replica has every GSN up to {}", site, x);
    }

    private volatile CatchUp lastTransfer;

    /**
     * A write-set member back in the primary component (re-merged after a partition) may still hold transactions of
     * its old views waiting for locks or for write sets that went to views it was not in: the copy it takes has their
     * outcome, so they end here (their clients get an error: the outcome is the others'). Latest first, so releasing
     * one grants nothing that is dropped next; what already runs on a backend finishes (the copy replaces it).
     */
    private void dropWaitingForOldViews() {
        List<Txn> ts = new ArrayList<>(txns.values());
        ts.sort((a, b) -> Long.compare(b.gsn, a.gsn));
        for (Txn t : ts) {
            // what it still commits here is replaced by the copy, and the others decided it without this member: its
            // write set must not reach them (under agreed delivery they may order the same request again later)
            t.ships = false;
            // another site's block whose log is ordered in the new view would wait behind this transfer for ever
            boolean block = t.request.kind() == TxnRequest.Kind.EXCLUSIVE && !t.origin && t.work == t.request
                    && (t.state == Txn.State.WAITING || t.state == Txn.State.HELD);
            boolean autocommit = t.request.kind() == TxnRequest.Kind.AUTOCOMMIT
                    && (t.state == Txn.State.WAITING || t.state == Txn.State.AWAITING_WRITE_SET);
            if (!t.fin || !(block || autocommit)) continue;
            LOG.info("{}: ordered in a view this site left; its outcome comes with the state transfer", t);
            CompletableFuture<Txn> f = waiting.remove(t.request.id());
            if (f != null) f.completeExceptionally(new IllegalStateException("site " + site
                    + " left the primary component after this transaction was ordered; its outcome is the other sites'"));
            t.state = Txn.State.FAILED;
            finish(t);
        }
    }

    /** The last state transfer: the GSN of the copy, and how long it took (null if none). */
    public CatchUp lastTransfer() { return lastTransfer; }

    /** A view that the site being replayed from installed between two GSNs: the blocks whose origin left end. */
    private synchronized void replayView(List<String> members) {
        for (Txn t : new ArrayList<>(txns.values())) {
            if (t.request.kind() == TxnRequest.Kind.EXCLUSIVE && t.work == t.request && !t.origin
                    && t.originMember != null && !members.contains(t.originMember)) {
                LOG.info("{}: origin {} left before the block's log arrived (replayed view): lock released", t, t.originMember);
                t.state = Txn.State.FAILED;
                finish(t);
            }
        }
    }

    /**
     * A transaction ordered here whose write set another member ships and that has not arrived: after a
     * rejoin it may have been multicast (RELIABLE) to a view this member was not in, and never comes.
     */
    private synchronized RequestId writeSetShippedWhileAway() {
        for (Txn t : txns.values())
            if (t.fin && t.request.kind() == TxnRequest.Kind.AUTOCOMMIT && policy.shipsWriteSet(t.request)
                    && (t.state == Txn.State.WAITING || t.state == Txn.State.AWAITING_WRITE_SET)
                    && !writeSets.containsKey(t.request.id()) && !executorOf(t).equals(self)) return t.request.id();
        return null;
    }

    /** A block's statement log or release: if it cannot be ordered, the block's lock must still go. */
    private static boolean endsBlock(TxnRequest r) {
        return r.kind() == TxnRequest.Kind.STATEMENT_LOG || r.kind() == TxnRequest.Kind.RELEASE;
    }

    /** A write set another site shipped (RELIABLE): applied once its transaction is granted and final here. */
    @Override public void reliable(GcsMessage m) {
        if (failure != null) return;
        WriteSetMessage w;
        try {
            w = WriteSetMessageCodec.decode(m.payload());
        } catch (RuntimeException e) {
            LOG.error("undecodable reliable message from {}: {}", m.sender(), e.toString());
            return;
        }
        synchronized (this) {
            if (w.executor().equals(self)) return;   // our own, looped back
            Txn t = txns.get(w.id());
            if (t != null) t.phases.writeSetArrived = System.nanoTime();
            writeSets.put(w.id(), w);
            if (t != null && t.state == Txn.State.AWAITING_WRITE_SET) tryApply(t);
        }
    }

    @Override public void undeliverable(MsgId id, Delivery d, String reason) {
        if (d == Delivery.RELIABLE && policy.kind() == ExecutionPolicy.Kind.SYMMETRIC) {
            // symmetric execution ships no write sets: a RELIABLE message of ours is a backlog report (flow control)
            LOG.debug("site {}: RELIABLE message {} not delivered ({}): not a write set", site, id, reason);
            return;
        }
        if (d == Delivery.RELIABLE) {
            // our RELIABLE multicasts are write sets of transactions this site committed for every site (WriteSetIo):
            // this replica is now ahead of the others, and while this member stays no one executes it again
            fail("site " + site + " cannot ship its write set " + id + " (" + reason + "): the others lack a transaction it committed."
                    + " It stops; the others execute it again.");
            return;
        }
        CompletableFuture<Txn> f;
        synchronized (this) {
            RequestId rid = byMsg.remove(id);
            f = rid == null ? null : waiting.remove(rid);
            if (rid != null) {
                TxnRequest r = submittedHere.remove(rid);
                if (r != null && endsBlock(r)) unreleased.put(rid, r);
                submitTimes.remove(rid);
            }
        }
        if (f != null) f.completeExceptionally(new IllegalStateException("transaction could not be ordered: " + reason));
    }

    // ------------------------------------------------------------------ locks and execution

    /**
     * Revoked attempts whose rollback has not returned yet. Sequences are not transactional: a revoked
     * attempt's rollback also puts back the sequences it advanced, and until it has, nothing newly
     * granted may run (its nextval would come before the put-back, and only at this site).
     */
    private final java.util.Set<Txn> revokedRollingBack = new java.util.HashSet<>();
    private final List<Object> grantsHeld = new ArrayList<>();

    @Override public void granted(Object id) {   // called with the engine's monitor held
        CompletableFuture<Void> local = localLocks.get(id);
        if (local != null) {
            local.complete(null);
            return;
        }
        if (!revokedRollingBack.isEmpty()) {
            grantsHeld.add(id);
            return;
        }
        Txn t = txns.get((RequestId) id);
        if (t == null) return;   // finished meanwhile (a held grant)
        t.phases.granted = System.nanoTime();
        if (t.request.kind() == TxnRequest.Kind.EXCLUSIVE) {
            if (t.state != Txn.State.WAITING) return;
            t.state = Txn.State.HELD;
            if (t.work != t.request) proceedBlock(t);           // its log is here already
            else if (t.origin) {                                 // the origin's block may write now
                CompletableFuture<Txn> f = waiting.remove(t.request.id());
                if (f != null) f.complete(t);
            }
            return;
        }
        if (t.request.kind() == TxnRequest.Kind.CERTIFY && t.origin) {
            // certified, and everything ordered before it is done here: the origin commits its prepared transaction now
            // and calls blockCommitted()
            if (t.state != Txn.State.WAITING) return;
            if (!inTurn(t)) {   // its locks are free, but commits follow the order (inTurn)
                t.grantedAwaitingTurn = true;
                return;
            }
            t.state = Txn.State.COMMITTING;
            CompletableFuture<Txn> f = waiting.remove(t.request.id());
            if (f != null) f.complete(t);
            return;
        }
        if (t.state == Txn.State.WAITING && replaysInTurn(t) && !inTurn(t)) {
            t.grantedAwaitingTurn = true;   // runs when its turn comes (nextInTurn), COMMIT in the same query
            return;
        }
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
                revokedRollingBack.add(t);
                executor.cancel(t);
            }
            case EXECUTED -> {
                revokedRollingBack.add(t);
                rollback(t);
            }
            case AWAITING_WRITE_SET -> t.state = Txn.State.WAITING;   // nothing was done here yet
            default -> { }
        }
    }

    /** Drops a tentative transaction that will not be ordered: its locks go once no attempt of it is open. */
    private void abandon(Txn t) {
        LOG.info("{}: its optimistic delivery belongs to a history this site gave up: dropped", t);
        t.abandoned = true;
        CompletableFuture<Txn> f = waiting.remove(t.request.id());   // never the buffered replies of a rolled-back attempt
        if (f != null) f.completeExceptionally(new IllegalStateException("transaction could not be ordered: site " + site + " left the primary component before it was"));
        switch (t.state) {
            case RUNNING -> {
                t.state = Txn.State.ROLLING_BACK;
                executor.cancel(t);
            }
            case EXECUTED -> rollback(t);
            case ROLLING_BACK -> { }
            default -> {
                t.state = Txn.State.FAILED;
                finish(t);
            }
        }
    }

    private void run(Txn t) {
        if (!t.fin && view != null && !view.primary()) {
            // outside the primary component nothing tentative runs (see endTentativeAttempts): it waits for a primary view
            t.state = Txn.State.WAITING;
            return;
        }
        boolean certified = t.request.kind() == TxnRequest.Kind.CERTIFY;
        if (certified && !t.resolvesPrepared && writeSets.containsKey(t.request.id())) {
            // a certified block whose CERTIFY carried the write set its origin captured at PREPARE (any policy)
            t.executor = writeSets.get(t.request.id()).executor();
            t.ships = false;
            t.state = Txn.State.AWAITING_WRITE_SET;
            tryApply(t);
            return;
        }
        if (policy.shipsWriteSet(t.request) && t.request.kind() == TxnRequest.Kind.AUTOCOMMIT) {
            if (writeSets.containsKey(t.request.id())) {      // its executor shipped it already: apply that
                t.executor = writeSets.get(t.request.id()).executor();
                t.ships = false;
            } else {
                t.executor = executorOf(t);
                t.ships = t.executor.equals(self);
            }
            if (!t.ships) {
                t.state = Txn.State.AWAITING_WRITE_SET;
                tryApply(t);
                return;
            }
        }
        if (!t.holdsConnection && usesReplicaConnection(t)) {
            // every transaction but the one whose turn it is leaves a connection free for it: that one must always be
            // able to run, since those ordered after it hold theirs until they commit, after it
            if (connectionsInUse >= replicaConnections - 1 && !(t.fin && inTurn(t))) {
                t.state = Txn.State.WAITING;
                waitingForConnection.add(t);
                return;
            }
            t.holdsConnection = true;
            connectionsInUse++;
        }
        t.state = Txn.State.RUNNING;
        t.attempts++;
        t.recordSql = t.fin ? positionSql(t) : null;   // with a final delivery it runs right after BEGIN
        t.commitWithRequest = t.fin && inTurn(t);
        executor.execute(t, t.fin, o -> executed(t, o));   // t.fin read under the monitor: see TxnExecutor
    }

    /** The member that executes {@code t}: from its delivery view once final, else from the current one. */
    private String executorOf(Txn t) {
        List<String> current = view.members();
        ExecutionPolicy p = t.fin && t.deliveryPolicy != null ? t.deliveryPolicy : policy;
        return p.executor(t.request, t.fin ? t.deliveryMembers : current, current);
    }

    /** Applies the write set once the transaction is granted, final, and its write set is here. */
    private void tryApply(Txn t) {
        if (t.state != Txn.State.AWAITING_WRITE_SET || !t.fin || !inTurn(t)) return;   // applying commits: in its turn
        WriteSetMessage w = writeSets.get(t.request.id());
        if (w != null) applyWriteSet(t, w);
    }

    private void applyWriteSet(Txn t, WriteSetMessage w) {
        t.applied = w;
        t.recordSql = positionSql(t);   // symmetric execution: a certified block's GSN is recorded as it is applied
        if (t.phases.writeSetArrived == 0) t.phases.writeSetArrived = System.nanoTime();
        if (!w.committed()) {   // it failed at its executor, deterministically: nothing to apply
            t.state = Txn.State.FAILED;
            finish(t);
            return;
        }
        t.state = Txn.State.APPLYING;
        t.attempts++;
        writeSetIo.apply(t, w, o -> applied(t, o));
    }

    private synchronized void applied(Txn t, TxnExecutor.Outcome o) {
        t.phases.executed = t.phases.committed = System.nanoTime();
        switch (o) {
            case OK -> {
                t.state = Txn.State.COMMITTED;
                commits.incrementAndGet();
                commitHook.accept(t.work);
                if (LOG.isDebugEnabled()) LOG.debug("{} gsn {} {} applied from {} {}", site, t.gsn, t.request.id(), t.applied.executor(), t.request.tables());
                finish(t);
            }
            case RETRY -> {
                if (t.attempts < 5) {
                    LOG.warn("{}: applying its write set failed for a transient reason; again", t);
                    if (t.request.kind() == TxnRequest.Kind.AUTOCOMMIT) {
                        t.state = Txn.State.AWAITING_WRITE_SET;
                        tryApply(t);
                    } else applyWriteSet(t, t.applied);
                    return;
                }
                t.state = Txn.State.FAILED;
                fail("site " + site + " could not apply the write set of " + t.request.id() + " after " + t.attempts + " attempts");
                finish(t);
            }
            case ERROR -> {
                t.state = Txn.State.FAILED;
                fail("site " + site + " could not apply the write set of " + t.request.id() + ": this replica no longer follows the others");
                finish(t);
            }
        }
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
        if (t.fin && inTurn(t)) commit(t);   // else when its turn comes (nextInTurn)
    }

    /**
     * Whether every transaction ordered before {@code t} that runs here has finished here: then {@code t} may commit.
     * Commits at every site follow the total order, so that every committed state of every replica is a prefix of the
     * order: a read-only transaction, run on a snapshot at any site, sees a prefix, and readers at two sites never see
     * two updates in opposite orders (which no serial order could explain: a "long fork"). Non-conflicting
     * transactions still execute side by side; only their COMMITs wait for their turn.
     */
    private boolean inTurn(Txn t) {
        return t.gsn > 0 && (unfinished.isEmpty() || unfinished.first() >= t.gsn);
    }

    /**
     * Whether {@code t}, granted, waits for its turn before it runs at all: another site's certified block replayed from
     * its statement log (its reads left out: a short run of writes, which certification already decided). Its COMMIT
     * waits for its turn in any case; run before it, it took a second round trip (COMMIT alone) on top of the first, and a
     * hand-off to an executor thread. Run in its turn, it is one query with its COMMIT, on the thread that committed the
     * transaction before it (see {@code WireTxnExecutor.execute}), as write sets are applied in their turn. What is lost
     * is the overlap of one replay's statements with the commit before it; the connection it would have held meanwhile
     * stays free. Its rows are locked from the grant on, as before, so nothing ordered after it can take them first.
     */
    private boolean replaysInTurn(Txn t) {
        return replayInTurn && t.request.kind() == TxnRequest.Kind.CERTIFY && !t.origin && t.fin && !t.resolvesPrepared
                && !writeSets.containsKey(t.request.id());
    }

    /** Setting {@code blocks.replay}: whether certified blocks replayed here run in their turn (see {@link #replaysInTurn}). */
    private volatile boolean replayInTurn = true;

    /** {@code true}: other sites' certified blocks replay in their turn ({@code blocks.replay: in-turn}); false: as soon as granted. */
    public void replayInTurn(boolean on) { replayInTurn = on; }

    /** The lowest unfinished transaction's turn has come: it commits (or applies, or its origin commits) if it is ready to. */
    private void nextInTurn() {
        if (unfinished.isEmpty()) return;
        Txn n = unfinishedTxns.get(unfinished.first());
        if (n == null) return;
        switch (n.state) {
            case EXECUTED -> { if (n.fin) commit(n); }
            case AWAITING_WRITE_SET -> tryApply(n);
            case WAITING -> {
                if (n.grantedAwaitingTurn) {
                    n.grantedAwaitingTurn = false;
                    granted(n.request.id());
                } else if (waitingForConnection.contains(n)) runWaitingForConnection();
            }
            default -> { }
        }
    }

    private void commit(Txn t) {
        t.state = Txn.State.COMMITTING;
        if (t.recordSql == null) t.recordSql = positionSql(t);
        executor.commit(t, o -> committed(t, o));
    }

    private synchronized void committed(Txn t, TxnExecutor.Outcome o) {
        t.phases.committed = System.nanoTime();
        if (o == TxnExecutor.Outcome.RETRY) {   // e.g. a serialization failure at COMMIT
            rollback(t);
            return;
        }
        t.state = o == TxnExecutor.Outcome.OK ? Txn.State.COMMITTED : Txn.State.FAILED;
        if (t.resolvesPrepared && o != TxnExecutor.Outcome.OK)
            fail("site " + site + " could not commit the prepared transaction of certified block " + t.request.id() + " (GSN " + t.gsn
                    + "), which every site certified: this replica no longer follows the others");
        if (o == TxnExecutor.Outcome.OK) {
            commits.incrementAndGet();
            commitHook.accept(t.work);
        }
        if (t.ships) writeSetIo.ship(t);   // before the locks go: its write set is applied in this order everywhere
        if (LOG.isDebugEnabled()) LOG.debug("{} gsn {} {} {} after {} attempt(s) {}", site, t.gsn, t.request.id(), t.state, t.attempts, t.request.tables());
        finish(t);
    }

    private void rollback(Txn t) {
        t.state = Txn.State.ROLLING_BACK;
        executor.rollback(t, o -> rolledBack(t));
    }

    private synchronized void rolledBack(Txn t) {
        if (revokedRollingBack.remove(t) && revokedRollingBack.isEmpty() && !grantsHeld.isEmpty()) {
            // every revoked attempt is undone, sequences included: the grants made meanwhile may go on now
            List<Object> held = new ArrayList<>(grantsHeld);
            grantsHeld.clear();
            for (Object id : held) if (!id.equals(t.request.id()) && (localLocks.containsKey(id) || locks.isGranted(id))) granted(id);
        }
        if (t.abandoned) {
            t.state = Txn.State.FAILED;
            finish(t);
            return;
        }
        t.state = Txn.State.WAITING;
        if (locks.isGranted(t.request.id())) run(t);
    }

    private void finish(Txn t) {
        RequestId id = t.request.id();
        waitingForConnection.remove(t);
        if (t.holdsConnection) {
            t.holdsConnection = false;
            connectionsInUse--;
        }
        if (t.origin && t.state == Txn.State.COMMITTED) phaseStats.record(t.phases);
        txns.remove(id);
        if (t.gsn > 0 && t.request.kind() == TxnRequest.Kind.AUTOCOMMIT && (t.state == Txn.State.COMMITTED || t.state == Txn.State.FAILED))
            // before its GSN counts as finished: the audit's ranges end there (under write-set policies only the executor ran it)
            audit.finished(t.gsn, t.state == Txn.State.COMMITTED, t.executor == null ? executor.outcomeDigest(t) : 0);
        if (t.gsn > 0 && unfinished.remove(t.gsn)) {
            unfinishedTxns.remove(t.gsn);
            if (catchingUp) notifyAll();
            releaseFinishWaiters();
            nextInTurn();
        }
        submittedHere.remove(id);
        writeSets.remove(id);
        if (!t.origin || t.request.kind() == TxnRequest.Kind.AUTOCOMMIT) executor.finish(t);
        locks.release(id);
        CompletableFuture<Txn> f = waiting.remove(id);
        if (f != null) f.complete(t);
        runWaitingForConnection();
    }

    /**
     * Update transactions committed at this site so far (replicated ones and blocks). An interactive
     * block compares it at its exclusive grant with its value at BEGIN: if it moved, the block's
     * snapshot may be stale and the block is aborted (SQLSTATE 40001) instead of writing on it.
     */
    public long localCommits() { return commits.get(); }

    /**
     * Middleware read locks for a local read-only transaction ({@code queries: locked}): queued here
     * only, behind the update transactions already delivered. Returns a handle for {@link #unlockLocal}.
     */
    public Object lockLocal(TableSet tables, java.time.Duration timeout) throws InterruptedException, java.util.concurrent.TimeoutException {
        Object id = "local-" + localSeq.incrementAndGet();
        CompletableFuture<Void> f = new CompletableFuture<>();
        synchronized (this) {
            localLocks.put(id, f);
            locks.enqueueFinal(id, tables);
        }
        try {
            f.get(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            return id;
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException | java.util.concurrent.TimeoutException e) {
            unlockLocal(id);
            throw e;
        }
    }

    /** A local all-tables lock granted at a delivery boundary: every transaction up to {@code gsn} finished, none after it started. */
    public record Boundary(Object lock, long gsn) {}

    /**
     * For a state transfer's snapshot: an all-tables lock queued behind everything ordered so far (final:
     * it revokes tentative attempts it overtakes), waited for; release it with {@link #unlockLocal}. A block
     * ordered before it whose log comes later is included whole (its lock ends only once it committed).
     */
    public Boundary lockAllAtBoundary(java.time.Duration timeout) throws InterruptedException, java.util.concurrent.TimeoutException {
        return awaitBoundary(queueBoundary(), timeout);
    }

    /** The all-tables lock of {@link #lockAllAtBoundary}, queued behind everything ordered so far, not waited for. */
    private Boundary queueBoundary() {
        Object id = "snapshot-" + localSeq.incrementAndGet();
        synchronized (this) {
            localLocks.put(id, new CompletableFuture<>());
            locks.enqueueFinal(id, TableSet.allTables());
            return new Boundary(id, orderedUpTo);
        }
    }

    /** Waits until a queued boundary lock is granted (released again on a timeout). */
    public Boundary awaitBoundary(Boundary b, java.time.Duration timeout) throws InterruptedException, java.util.concurrent.TimeoutException {
        Object id = b.lock();
        long gsn = b.gsn();
        CompletableFuture<Void> f;
        synchronized (this) { f = localLocks.get(id); }
        if (f == null) throw new IllegalStateException("boundary lock " + id + " released already");
        try {
            f.get(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            // the attempts it revoked must have put their sequences back before the snapshot is taken
            while (true) {
                synchronized (this) { if (revokedRollingBack.isEmpty()) break; }
                Thread.sleep(2);
            }
            return new Boundary(id, gsn);
        } catch (java.util.concurrent.ExecutionException e) {
            unlockLocal(id);
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException | java.util.concurrent.TimeoutException e) {
            unlockLocal(id);
            throw e;
        }
    }

    public synchronized void unlockLocal(Object id) {
        if (localLocks.remove(id) != null) locks.release(id);
    }

    /** This site stops: every client still waiting gets an error now. */
    public void shutdown(String reason) {
        stopped = true;   // before the futures fail: whoever waits must not take that for "never ordered"
        List<CompletableFuture<Txn>> fs;
        synchronized (this) {
            fs = new ArrayList<>(waiting.values());
            waiting.clear();
            finishWaiters.values().forEach(l -> l.forEach(f -> f.complete(null)));   // they see stopped
            finishWaiters.clear();
            submittedHere.clear();
            originWork.clear();
            submitTimes.clear();
            byMsg.clear();
        }
        for (CompletableFuture<Txn> f : fs) f.completeExceptionally(new IllegalStateException("site " + site + " stopped: " + reason));
    }

    /** Called (holding the engine's monitor: keep it short) for every transaction committed here. */
    public void onCommit(java.util.function.Consumer<TxnRequest> hook) { this.commitHook = hook; }

    /** Called (on the delivery thread) each time a state transfer replaced the replica: what was read of it is stale. */
    public void onStateTransferred(Runnable hook) { this.transferHook = hook; }
    private volatile Runnable transferHook;

    /** Per-phase response-time breakdown of the update transactions this site originated. */
    public PhaseStats phaseStats() { return phaseStats; }

    /** The GSN of the last final delivery here: sites that delivered the same sequence show the same. */
    public long lastGsn() { return lastGsn; }

    /** Transactions delivered here and not finished yet (0 when this site has caught up). */
    public synchronized int pending() { return txns.size(); }

    /** The bytes of SQL and data those transactions hold here (summed when asked: a few times a second, for flow control). */
    public synchronized long pendingBytes() {
        long n = 0;
        for (Txn t : txns.values()) n += t.request().bytes();
        return n;
    }

    /** Diagnostics: transactions here, waiting for locks, lock queues. */
    public synchronized String describe() {
        Txn turn = unfinished.isEmpty() ? null : unfinishedTxns.get(unfinished.first());
        return "site " + site + ": " + txns.size() + " transactions, " + locks.waiting() + " waiting for locks, queues " + locks.queueLengths()
                + (turn == null ? "" : ", next to commit GSN " + turn.gsn + " " + turn + (locks.isGranted(turn.request.id()) ? " granted" : " not granted"))
                + (replicaConnections == Integer.MAX_VALUE ? "" : ", replica connections in use " + connectionsInUse + " of " + replicaConnections
                        + ", " + waitingForConnection.size() + " waiting for one");
    }
}
