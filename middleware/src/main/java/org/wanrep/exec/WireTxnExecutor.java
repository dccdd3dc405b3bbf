package org.wanrep.exec;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.wanrep.backend.BackendConnection;
import org.wanrep.backend.BackendPool;
import org.wanrep.txn.Txn;
import org.wanrep.txn.TxnExecutor;
import org.wanrep.txn.TxnRequest;
import org.wanrep.wire.PgError;
import org.wanrep.wire.WireMessage;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Runs replicated transactions by replaying their frontend messages over the wire protocol, inside
 * a BEGIN of our own: at the origin on the client's own backend (its replies buffered for the client,
 * see {@link OriginWork}), elsewhere on a pooled backend. Blocking I/O runs on virtual threads.
 */
public final class WireTxnExecutor implements TxnExecutor, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(WireTxnExecutor.class);

    private final BackendPool pool;
    // Platform threads, reused: blocking socket I/O to the replica, one thread per transaction in
    // flight. Measured on 2 cores, virtual threads here cost more CPU per transaction (the
    // per-task executor's bookkeeping and idle carriers spinning), CPU PostgreSQL then lacks.
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new ExecThread(r);
        t.setDaemon(true);
        return t;
    });

    /** The pool's threads: only they take up a transaction in its turn after their own step (see {@link #execute}). */
    private static final class ExecThread extends Thread {
        ExecThread(Runnable r) { super(r, "wanrep-exec"); }
    }

    private volatile java.util.function.Consumer<String> captureStarter = db -> { };
    private volatile java.util.function.Consumer<String> fatalHandler = reason -> LOG.error("{}", reason);

    /** What to do when this replica may no longer match the others (the site stops). */
    public void onFatal(java.util.function.Consumer<String> f) { this.fatalHandler = f; }

    public WireTxnExecutor(BackendPool pool) { this.pool = pool; }

    /** The replica, for the GSN records' table ({@link ReplicaPosition#ensure}); null until positions are kept. */
    private volatile org.wanrep.backend.BackendTarget positions;

    public void recordPositionsIn(org.wanrep.backend.BackendTarget target) { this.positions = target; }

    /**
     * Called with the database before a transaction this site executes for a write-set policy opens
     * its block, to have that database's capture running (creating a slot waits for open transactions).
     */
    public void onCapturedDatabase(java.util.function.Consumer<String> starter) { this.captureStarter = starter; }

    /** The replies kept for the client (at another site), its error if any, and the sequence values it reached. */
    static List<WireMessage> keptReplies(Txn t) { return work(t).replies; }
    static PgError error(Txn t) { return work(t).error; }
    static PgError commitError(Txn t) { return work(t).commitError; }
    static Map<String, Long> sequences(Txn t) { return work(t).sequences; }

    /** Per-transaction state at this site. */
    static class Work {
        BackendConnection conn;
        boolean pooled = true;
        List<WireMessage> messages;   // null: the request's own messages
        final List<WireMessage> replies = new ArrayList<>();
        boolean keepReplies;
        PgError error, commitError;
        /** What the current attempt's request did, for the sites' comparison (see {@link #outcomeDigest}). */
        long tags;
        boolean fusedCommit;   // COMMIT went with the request: commit() only reports its outcome
        boolean positionRecorded;   // the attempt's BEGIN recorded its GSN (ReplicaPosition)
        volatile boolean running;
        volatile java.util.concurrent.CompletableFuture<Void> cancelling;   // a CancelRequest under way
        /**
         * The engine cancelled the current attempt (guarded by this): sticky until the rollback that follows every
         * cancel, so an attempt cancelled before it started, or before its request reached the backend (a
         * CancelRequest finding the backend idle is dropped), does not run at all.
         */
        boolean cancelled;
        /** The current attempt's request is on its way to the backend (guarded by this): only a CancelRequest stops it now. */
        boolean requestSent;
        final Map<String, Long> sequences = new java.util.TreeMap<>();      // write-set policies: values reached
        /** The setval() calls that put back the sequences as they were before the current attempt ("" if none). */
        String sequencePutBack;
    }

    /**
     * The origin's execution of a request: on the client's own backend, with the messages as the
     * client sent them (its named statements exist there), replies kept for the client.
     */
    public static final class OriginWork extends Work {
        /** The executor's work for this transaction, run by the client's own thread (see {@link #runUntil}). */
        private final java.util.concurrent.LinkedBlockingQueue<Runnable> tasks = new java.util.concurrent.LinkedBlockingQueue<>();
        private static final Runnable DONE = () -> { };
        /** Set when the client thread stopped taking tasks: later ones go to the pool (guarded by this). */
        private boolean closed;

        public OriginWork(BackendConnection clientBackend, List<WireMessage> clientMessages) {
            conn = clientBackend;
            pooled = false;
            messages = List.copyOf(clientMessages);
            keepReplies = true;
        }

        /**
         * Runs this transaction's executions, commit and rollbacks on the calling thread (the client's
         * session, which waits for it anyway) until {@code done} completes: one thread switch fewer per
         * update than handing them to an executor thread and waking the client afterwards.
         */
        public void runUntil(java.util.concurrent.CompletableFuture<?> done) throws InterruptedException {
            done.whenComplete((x, e) -> tasks.offer(DONE));
            try {
                for (Runnable r; (r = tasks.take()) != DONE; ) runHere(r);
            } finally {
                // the transaction may still dispatch (a future completed early: site stopping, not ordered);
                // what came before closing runs here, what comes after on the pool: nothing is left unrun
                List<Runnable> left = new ArrayList<>();
                synchronized (this) {
                    closed = true;
                    tasks.drainTo(left);
                }
                for (Runnable r : left) if (r != DONE) r.run();
            }
        }

        /** Queues a step for the client thread; false once it stopped taking them. */
        synchronized boolean offer(Runnable r) {
            return !closed && tasks.offer(r);
        }

        /** Whether the client thread stopped taking steps (its backend may then be in use by the pool's threads). */
        synchronized boolean closed() { return closed; }

        /** The replies to the client's messages from the last attempt (without ours: BEGIN, COMMIT...). */
        public List<WireMessage> replies() { return replies; }

        /** The error COMMIT returned, if any (a deferred constraint, say). */
        public PgError commitError() { return commitError; }

        /** True if the client's backend broke and the transaction ran on a pooled one instead. */
        public boolean movedToPool() { return pooled; }
    }

    /**
     * Runs a blocking step of {@code w}: on the origin client's own thread when it waits for it, else on a pool thread,
     * where a throw (none is expected) stops the site rather than leaving the transaction half-done here alone.
     */
    private void dispatch(Work w, Runnable r) {
        if (!(w instanceof OriginWork o && !o.pooled && o.offer(r))) onPool(failStopOnThrow(() -> runHere(r), fatalHandler::accept));
    }

    /**
     * Runs {@code r} on a pool thread; once {@link #close} shut the pool down (the site is stopping) it is dropped: the
     * site's transactions end with it, and a grant that came in late must not throw on the engine's thread.
     */
    private void onPool(Runnable r) {
        try {
            threads.execute(r);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            if (!threads.isShutdown()) throw e;
            LOG.debug("site stopping: a step of a transaction not run ({})", e.toString());
        }
    }

    /** Steps left to this thread by the step it runs (see {@link #commitNext}); null outside a step. */
    private static final ThreadLocal<java.util.ArrayDeque<Runnable>> LATER = new ThreadLocal<>();

    /** Runs a step, then the steps it left to this thread, outside whatever monitor the step took. */
    static void runHere(Runnable r) {
        if (LATER.get() != null) {   // within a step already: the outer call runs what this one leaves
            r.run();
            return;
        }
        java.util.ArrayDeque<Runnable> later = new java.util.ArrayDeque<>();
        LATER.set(later);
        try {
            r.run();
        } finally {
            // the steps left here are other transactions' (their commits in turn): they run even if this step threw,
            // each guarded (see failStopOnThrow), so that no transaction's step is silently skipped
            try {
                for (Runnable n; (n = later.poll()) != null; ) n.run();
            } finally {
                LATER.remove();
            }
        }
    }

    /** Leaves {@code step} to this thread, to run once its present step is over; false outside a step. */
    static boolean leaveHere(Runnable step) {
        java.util.ArrayDeque<Runnable> later = LATER.get();
        if (later == null) return false;
        later.add(step);
        return true;
    }

    /**
     * {@code step} for another transaction's thread to run: a throw from it (none is expected, every step handles its
     * own failures) stops the site, since the transaction is left half-done here while the others go on, and the steps
     * queued after it on that thread still run.
     */
    static Runnable failStopOnThrow(Runnable step, java.util.function.Consumer<String> fatal) {
        return () -> {
            try {
                step.run();
            } catch (Throwable t) {
                LOG.error("a transaction's step failed unexpectedly", t);
                fatal.accept("site executor: a transaction's step failed unexpectedly (" + t + "); this replica cannot follow the others");
            }
        };
    }

    /**
     * A COMMIT whose turn came while this thread ended the transaction before it (commits follow the total order): run
     * here once the present step is over, instead of waking the transaction's own thread. Under load the next
     * transactions are mostly done executing and only wait for their turn, so one thread then commits them one after
     * the other; a thread switch per commit made each turn cost a scheduling delay.
     */
    private void commitNext(Work w, Runnable commit) {
        boolean here = !(w instanceof OriginWork o && !o.pooled && o.closed()) && leaveHere(failStopOnThrow(commit, fatalHandler::accept));
        if (!here) dispatch(w, commit);
    }

    private static Work work(Txn t) {
        if (t.attachment == null) t.attachment = new Work();
        return (Work) t.attachment;
    }

    /**
     * Commands PostgreSQL runs only outside a transaction block (CREATE DATABASE): they cannot be
     * rolled back, so they run once their delivery is final, as one statement without our BEGIN, and
     * their outcome is the COMMIT's. Every site runs them in delivery order under the all-tables lock.
     */
    public static boolean outsideTransaction(TxnRequest r) {
        if (r.messages().size() != 1 || r.messages().get(0).kind() != 'Q') return false;
        return switch (r.kind()) {
            case AUTOCOMMIT -> OUTSIDE.matcher(r.messages().get(0).queryText()).lookingAt();
            // a certified block this site prepared before it restarted (TxnRequest.committingPrepared): clients cannot send it
            case STATEMENT_LOG -> COMMIT_PREPARED.matcher(r.messages().get(0).queryText()).lookingAt();
            default -> false;
        };
    }

    private static final java.util.regex.Pattern OUTSIDE = java.util.regex.Pattern.compile("(?is)\\s*create\\s+database\\b[^;]*;?\\s*$");
    private static final java.util.regex.Pattern COMMIT_PREPARED = java.util.regex.Pattern.compile("COMMIT PREPARED '[^']*'$");

    private void executeOutsideTransaction(Txn t, Work w, boolean commit, Done done) {
        if (!commit) {   // tentative (opt-safe): nothing can be undone, so nothing runs before the final delivery
            w.fusedCommit = false;
            done.completed(Outcome.OK);
            return;
        }
        dispatch(w, () -> done.completed(runOutsideTransaction(t, w)));
    }

    private Outcome runOutsideTransaction(Txn t, Work w) {
        TxnRequest r = t.work();
        try {
            if (w.conn == null) w.conn = pool.borrow(r.database(), r.role());
            w.replies.clear();
            w.error = null;
            w.commitError = null;
            w.fusedCommit = true;
            List<WireMessage> ms = w.messages != null ? w.messages : r.messages();
            for (WireMessage m : ms) w.conn.send(m);
            w.conn.flush();
            while (!w.conn.tracker().idle()) {
                WireMessage m = w.conn.read();
                if (m.kind() == 'E' && w.error == null) w.error = PgError.parse(m);
                if (w.keepReplies) w.replies.add(m);
            }
            w.commitError = w.error;
            if (w.error == null) return Outcome.OK;
            // 55006: another session is connected to the template database at this site just now: timing, again
            return TxnExecutor.transientState(w.error.sqlState()) || w.error.sqlState().equals("55006") ? Outcome.RETRY : Outcome.ERROR;
        } catch (IOException | RuntimeException e) {
            // it may or may not have taken effect here: this replica's state is unknown
            fatalHandler.accept("site replica state unknown: " + t + ": connection lost during " + r.messages().get(0).queryText().trim() + " (" + e + ")");
            w.commitError = PgError.error("08006", "wanrep: connection to the replica lost");
            return Outcome.ERROR;
        }
    }

    /** When a state transfer last replaced this replica's databases (System.nanoTime), so that older backends are dead. */
    private volatile long replicaReplacedAt = System.nanoTime() - (1L << 62);

    /** A state transfer replaced the replica's databases: every client backend opened before is dead. */
    public void replicaReplaced() { replicaReplacedAt = System.nanoTime(); }

    @Override public void execute(Txn t, boolean commit, Done done) {
        Work w = work(t);
        if (outsideTransaction(t.work())) {
            executeOutsideTransaction(t, w, commit, done);
            return;
        }
        if (t.ships() && !t.isOrigin()) w.keepReplies = true;   // they travel with the write set to the client's site
        Runnable attempt = () -> done.completed(runOnce(t, w, commit));
        // in its turn, and the transaction before it just ended on this pool thread: run here, after that step, as a COMMIT
        // in turn is (commitNext); another pool thread would only be woken to do the same (a replay in turn, see
        // ReplicationEngine). Not on a client's thread (its OriginWork's steps): its client would wait for the run
        boolean here = Thread.currentThread() instanceof ExecThread && commit && t.commitsWithRequest() && !(w instanceof OriginWork)
                && leaveHere(failStopOnThrow(attempt, fatalHandler::accept));
        if (!here) dispatch(w, attempt);
    }

    /**
     * One attempt: our BEGIN (isolation, the origin's settings, time and seed), and once it answered
     * that the block is open, the request's messages and, when the delivery is already final, COMMIT,
     * pipelined. BEGIN is not pipelined with the request: if BEGIN failed (a cancel landing on it, say)
     * the request would run outside any block and autocommit, and its retry would apply it twice.
     * Replies are told apart by their ReadyForQuery: the request's, then COMMIT's.
     */
    private Outcome runOnce(Txn t, Work w, boolean commit) {
        TxnRequest r = t.work();
        boolean commitSent = false;
        try {
            settleCancel(w);
            w.replies.clear();
            w.error = null;
            w.fusedCommit = false;
            w.commitError = null;
            w.tags = 0;
            if (cancelledBeforeRequest(w)) {   // revoked before it started: it does not run
                w.sequencePutBack = null;   // nor does the rollback that follows put back an earlier attempt's sequence values
                return Outcome.RETRY;
            }
            if (w.conn == null) w.conn = pool.borrow(r.database(), r.role());
            if (!w.pooled && w.conn.openedAt() - replicaReplacedAt < 0) {
                // a client's backend opened before a state transfer dropped its database (a session that connected while
                // the site was still transferring): a final attempt pipelines its COMMIT, and a dead socket found only
                // then would leave the outcome unknown, so it runs on a pooled connection instead, as for any broken one
                brokenConnection(t, w, new IOException("the client's backend was opened before a state transfer replaced the replica"));
                return Outcome.RETRY;
            }
            w.running = true;
            if (t.ships()) captureStarter.accept(r.database());   // before BEGIN: a slot waits for open transactions
            // before every attempt: transactions ordered before this one may have advanced them since the last
            w.sequencePutBack = sequencePutBack(w.conn, r);
            boolean onClientBackend = w instanceof OriginWork && !w.pooled;
            Map<String, String> resetValues = onClientBackend ? null : SessionDefaults.of(w.conn);
            List<String> beginStatements = beginStatements(r, resetValues);
            if (t.ships()) beginStatements.add(WriteSetSql.tag(t.captureTag()));
            // a final attempt records its GSN first thing: if the request fails, the record rolls back with it
            String record = commit ? t.recordSql() : null;
            if (record != null && positions != null) ReplicaPosition.ensure(positions, r.database());
            w.positionRecorded = record != null;
            if (record != null) beginStatements.add(record);
            String begin = String.join("; ", beginStatements);
            // A tentative attempt may be revoked, and its cancel could land on BEGIN; the request would
            // then run outside any block and autocommit. So it waits for BEGIN to open the block. A final
            // attempt is never revoked or cancelled (and older cancels are settled): one round trip. Except on
            // the client's own backend: its session's statement_timeout (a client's to set) could cancel BEGIN
            // itself, before the block's own setting lifts it, and the request would then commit on its own here.
            boolean pipelined = commit && !onClientBackend;
            List<WireMessage> requested = w.messages != null ? w.messages : r.messages();
            // one query string, for a simple-query request: away from the origin when the pooled session has the
            // request's settings (they apply to the whole string); at the origin, where the session is the client's own,
            // our part being ASCII (an error's position is then moved back by its length in characters). A block's log
            // only when it is one Query: its statements ran as queries of their own at the origin, and several lexed
            // whole would not see a setting that an earlier one changed (standard_conforming_strings, by a SET or in a
            // trigger); a certified block's origin joins them into one where nothing can change one (txn.ReplayLog)
            boolean log = r.kind() == TxnRequest.Kind.STATEMENT_LOG;
            boolean oneQuery = commit && !t.ships() && isAscii(begin) && (r.kind() == TxnRequest.Kind.AUTOCOMMIT || log)
                    && requested.size() == 1 && requested.get(0).kind() == 'Q'
                    && (onClientBackend ? w.keepReplies : !w.keepReplies && sessionAsShipped(r, resetValues));
            if (oneQuery) {
                boolean withCommit = t.commitsWithRequest();   // COMMIT goes with the request only in its turn
                commitSent = withCommit;   // from the send on, a broken connection leaves the outcome unknown
                Outcome o = runAsOneQuery(t, w, begin, beginStatements.size(), requested.get(0), withCommit);
                if (o != null) return o;
                commitSent = false;   // nothing of it ran: the three-query form below tells whose error it was
            }
            if (!pipelined) {
                PgError beginError = w.conn.run(begin);
                if (beginError != null || w.conn.status() != 'T') {
                    w.error = beginError != null ? beginError : PgError.error("25000", "wanrep: BEGIN did not open a transaction block");
                    LOG.warn("{}: BEGIN refused: {}", t, w.error);
                    if (TxnExecutor.transientState(w.error.sqlState())) return Outcome.RETRY;
                    beginRefused(t, w.error);
                    return Outcome.ERROR;
                }
                // revoked while BEGIN ran: a CancelRequest then may have found the backend idle and been dropped
                if (cancelledBeforeRequest(w)) {
                    w.error = PgError.error("57014", "wanrep: attempt cancelled before its request was sent");
                    return Outcome.RETRY;
                }
            } else {
                w.conn.send(WireMessage.query(begin));
            }
            List<WireMessage> ms = w.messages != null ? w.messages : r.messages();
            int requestReadies = 0;
            for (WireMessage m : ms) if (m.kind() == 'Q' || m.kind() == 'S') requestReadies++;
            boolean check = t.ships() && requestReadies > 0;
            // COMMIT goes with the request only in the transaction's turn (commits follow the total order)
            boolean fuse = commit && t.commitsWithRequest() && requestReadies > 0;
            for (WireMessage m : ms) w.conn.send(m);
            if (check) w.conn.send(WireMessage.query(WriteSetSql.checkAndSequences(r.tables())));
            if (fuse) w.conn.send(WireMessage.query("COMMIT"));
            commitSent = fuse;   // from here a broken connection leaves the outcome unknown (flush may have sent it)
            w.conn.flush();
            w.sequences.clear();
            int readies = pipelined ? -1 : 0;   // -1: BEGIN's replies come first
            char requestStatus = 'T';          // the transaction status after the request's last message
            PgError checkError = null, beginError = null;
            while (!w.conn.tracker().idle()) {
                if (w.conn.tracker().awaitingCopyData()) {   // a COPY whose data is not in the request
                    w.conn.send(org.wanrep.wire.Messages.copyFail("wanrep: no COPY data in the replicated request"));
                    w.conn.flush();
                }
                WireMessage m = w.conn.read();
                if (readies < 0) {
                    if (m.kind() == 'E' && beginError == null) beginError = PgError.parse(m);
                    if (m.kind() == 'Z') {
                        readies = 0;
                        if (org.wanrep.wire.Messages.status(m) != 'T') {
                            // the request just sent runs outside any block: it may commit on its own here
                            String why = t + ": BEGIN did not open a block (" + beginError + "); the request may have committed on its own";
                            LOG.error("{}", why);
                            fatalHandler.accept("site replica may have diverged: " + why);
                        }
                    }
                    continue;
                }
                // the request's replies end with its ReadyForQuery messages, then the check's, then COMMIT's
                int segment = requestReadies == 0 || readies < requestReadies ? 0 : check && readies == requestReadies ? 1 : 2;
                if (m.kind() == 'Z') readies++;
                switch (segment) {
                    case 0 -> {
                        if (m.kind() == 'E' && w.error == null) w.error = PgError.parse(m);
                        if (m.kind() == 'Z') requestStatus = org.wanrep.wire.Messages.status(m);
                        if (m.kind() == 'C') w.tags = w.tags * 1_000_003L + tagHash(org.wanrep.wire.Messages.commandTag(m));
                        if (w.keepReplies) w.replies.add(m);
                    }
                    case 1 -> {
                        if (m.kind() == 'E' && checkError == null) checkError = PgError.parse(m);
                        if (m.kind() == 'D') {
                            List<String> row = org.wanrep.wire.Messages.dataRowValues(m);
                            if (row.get(0) != null && row.get(1) != null) w.sequences.put(row.get(0), Long.parseLong(row.get(1)));
                        }
                    }
                    default -> {
                        if (m.kind() == 'E' && w.commitError == null) w.commitError = PgError.parse(m);
                    }
                }
            }
            if (beginError != null) {
                LOG.warn("{}: BEGIN refused: {}", t, beginError);
                w.error = beginError;
                if (!TxnExecutor.transientState(beginError.sqlState())) beginRefused(t, beginError);
            }
            w.fusedCommit = fuse;
            if (r.kind() == TxnRequest.Kind.STATEMENT_LOG && requestStatus != 'T' && w.error != null
                    && !TxnExecutor.transientState(w.error.sqlState())) logFailed(t, w.error);
            if (w.error == null && checkError != null) {   // what a write set cannot carry: refused as if at COMMIT
                w.error = checkError;
                w.commitError = checkError;
            }
            if (w.error == null && fuse && w.commitError != null) w.error = w.commitError;   // e.g. 40001 at COMMIT
            if (w.error == null) return Outcome.OK;
            return TxnExecutor.transientState(w.error.sqlState()) ? Outcome.RETRY : Outcome.ERROR;
        } catch (IOException | RuntimeException e) {
            if (commitSent) {   // not a retry: the COMMIT may have taken effect
                w.fusedCommit = true;
                commitLost(t, w, e);
                return Outcome.ERROR;
            }
            brokenConnection(t, w, e);
            return Outcome.RETRY;
        } finally {
            synchronized (w) {
                w.running = false;
                w.requestSent = false;
            }
        }
    }

    /**
     * An origin ships a block's log only when the block is intact there and then commits it: a log that leaves the block
     * failed here (not for timing) means this replica no longer matches the origin's, and the site stops.
     */
    private void logFailed(Txn t, PgError error) {
        String why = t + ": the block's log failed here (" + error + ") but the block is intact at its origin";
        LOG.error("{}", why);
        fatalHandler.accept("site replica differs from the block's origin: " + why);
    }

    private static final java.util.concurrent.atomic.LongAdder ONE_QUERY_RUNS = new java.util.concurrent.atomic.LongAdder();

    /** Attempts run as one query string so far, in this JVM (tests: the path was taken). */
    public static long oneQueryRuns() { return ONE_QUERY_RUNS.sum(); }

    private static final java.util.concurrent.atomic.LongAdder COMMITS_ALONE = new java.util.concurrent.atomic.LongAdder();

    /** COMMITs sent on their own, after their transaction's request, so far in this JVM (tests: a replay in turn sends none). */
    public static long commitsAlone() { return COMMITS_ALONE.sum(); }

    /**
     * A final attempt of a simple-query request as ONE query string: our BEGIN, the request's text and, in the
     * transaction's turn, COMMIT. PostgreSQL answers it with one flush, where separate queries had one each (and as many
     * wake-ups here); and it parses the whole string before running any of it, then skips the rest after an error, so
     * nothing of the request ever runs outside our block (which is also why a client's statement_timeout cannot make it
     * autocommit at the origin: whatever it cancels, the rest is skipped). The outcome is read as the separate form reads
     * it: the request's command tags and error, COMMIT's error; a request that failed leaves the block open and failed
     * (COMMIT did not run), which a ROLLBACK then ends, as the separate form's COMMIT would have. At the origin the
     * client's replies are the request's part of the answer, an error's position counted from the request's text.
     * Without COMMIT the block stays open for {@link #commit}. Null if nothing of it ran and the caller must find out
     * why the other way.
     */
    private Outcome runAsOneQuery(Txn t, Work w, String begin, int ours, WireMessage request, boolean withCommit) throws IOException {
        ONE_QUERY_RUNS.increment();
        // new lines: a request ending in a "--" comment must not swallow what follows
        String prefix = begin + ";\n";   // begin: our first ours statements, joined
        w.conn.send(request.queryAround(prefix, withCommit ? "\n;COMMIT" : ""));
        w.conn.flush();
        int completed = 0;
        PgError error = null;
        int errorAt = -1;   // how many statements had completed when the error came
        char status = 'T';
        List<String> tags = new ArrayList<>();
        List<WireMessage> replies = w.keepReplies ? new ArrayList<>() : null;
        WireMessage ready = null;
        while (!w.conn.tracker().idle()) {
            WireMessage m = w.conn.read();
            boolean theirs = completed >= ours;   // past our statements' answers
            switch (m.kind()) {
                case 'C' -> {
                    if (completed++ >= ours) tags.add(org.wanrep.wire.Messages.commandTag(m));
                }
                case 'E' -> {
                    if (error == null) {
                        error = PgError.parse(m);
                        errorAt = completed;
                    }
                    if (replies != null && theirs) m = org.wanrep.wire.Messages.withErrorPositionBack(m, prefix.length());
                }
                case 'Z' -> {
                    status = org.wanrep.wire.Messages.status(m);
                    ready = m;
                    theirs = false;
                }
                default -> { }
            }
            if (replies != null && theirs) replies.add(m);
        }
        boolean committed = withCommit && error == null && !tags.isEmpty() && tags.get(tags.size() - 1).equals("COMMIT");
        if (committed) {   // COMMIT's tag (a request never holds COMMIT: the classifier refuses that)
            tags.remove(tags.size() - 1);
            if (replies != null) replies.remove(lastOfKind(replies, 'C'));
        }
        boolean commitFailed = withCommit && error != null && status == 'I' && errorAt > ours;   // a failed request leaves E
        if (commitFailed && replies != null) replies.remove(lastOfKind(replies, 'E'));   // reported as COMMIT's error
        if (replies != null && ready != null) replies.add(ready);
        for (String tag : tags) w.tags = w.tags * 1_000_003L + tagHash(tag);
        if (status == 'E' || (status == 'T' && (withCommit || error != null))) {
            // failed before COMMIT ran (or, which cannot happen, no COMMIT at all): end the block as COMMIT would have
            PgError rb = w.conn.run("ROLLBACK");
            if (rb != null || w.conn.status() != 'I') throw new IOException("ROLLBACK after a failed replicated request: " + rb);
        }
        w.fusedCommit = withCommit || error != null;
        if (error == null) {
            if (withCommit && !committed) throw new IOException("no COMMIT in the answer to a replicated request");
            if (replies != null) w.replies.addAll(replies);
            return Outcome.OK;
        }
        // nothing completed: PostgreSQL parses the whole string first, so the error may be the request text's own (a
        // syntax error, deterministic everywhere) as well as our BEGIN's: nothing ran, the three-query form tells which
        if (errorAt == 0) {
            w.fusedCommit = false;
            return null;
        }
        if (errorAt < ours) {   // our BEGIN's part failed: the request did not run
            w.error = error;
            LOG.warn("{}: BEGIN refused: {}", t, error);
            if (TxnExecutor.transientState(error.sqlState())) return Outcome.RETRY;
            beginRefused(t, error);
            return Outcome.ERROR;
        }
        if (replies != null) w.replies.addAll(replies);
        if (commitFailed) w.commitError = error;   // COMMIT itself failed (a deferred constraint, a serialization failure)
        w.error = error;
        boolean transientError = TxnExecutor.transientState(error.sqlState());
        if (!commitFailed && !transientError && t.work().kind() == TxnRequest.Kind.STATEMENT_LOG) logFailed(t, error);
        return transientError ? Outcome.RETRY : Outcome.ERROR;
    }

    private static int lastOfKind(List<WireMessage> ms, char kind) {
        for (int i = ms.size() - 1; i >= 0; i--) if (ms.get(i).kind() == kind) return i;
        throw new IllegalStateException("no message " + kind);
    }

    private static boolean isAscii(String s) {
        for (int i = 0; i < s.length(); i++) if (s.charAt(i) >= 0x80) return false;
        return true;
    }

    /**
     * What a finished transaction did here, for the sites' comparison of outcomes ({@code txn.OutcomeAudit}): its
     * request's command tags, with row counts for the commands that write (INSERT, UPDATE, DELETE, MERGE, COPY), and
     * the SQLSTATE of its error or COMMIT's. Every replica that follows the others computes the same value.
     */
    @Override public long outcomeDigest(Txn t) {
        Work w = work(t);
        // the request's error, else COMMIT's: whether COMMIT went in the same round trip differs between sites
        PgError e = w.error != null ? w.error : w.commitError;
        return e == null ? w.tags : w.tags * 1_000_003L + tagHash("E" + e.sqlState());
    }

    /** A command tag's hash; a count only where it says how many rows were written (a SELECT's need not be locked). */
    static long tagHash(String tag) {
        boolean writes = tag.startsWith("INSERT ") || tag.startsWith("UPDATE ") || tag.startsWith("DELETE ")
                || tag.startsWith("MERGE ") || tag.startsWith("COPY ");
        int end = tag.length();
        if (!writes) {
            int sp = tag.lastIndexOf(' ');
            boolean count = sp > 0 && sp < end - 1;
            for (int i = sp + 1; count && i < end; i++) count = Character.isDigit(tag.charAt(i));
            if (count) end = sp;
        }
        long h = 0xcbf29ce484222325L;   // FNV-1a
        for (int i = 0; i < end; i++) {
            h ^= tag.charAt(i);
            h *= 0x100000001b3L;
        }
        return h;
    }

    /** True if the attempt was cancelled; else marks its request as sent, after which {@link #cancel} sends a CancelRequest. */
    private static boolean cancelledBeforeRequest(Work w) {
        synchronized (w) {
            if (w.cancelled) return true;
            w.requestSent = true;
            return false;
        }
    }

    /**
     * Our BEGIN (isolation, the origin's settings, time, seed) failed for a reason that is not timing:
     * a setting this replica cannot take, say. The request did not run here while the origin's outcome
     * does not depend on it: this replica would silently miss it, so the site stops.
     */
    private void beginRefused(Txn t, PgError e) {
        String why = t + ": this site's BEGIN for it was refused (" + e + "); the others run it";
        LOG.error("{}", why);
        fatalHandler.accept("site replica cannot follow: " + why);
    }

    /**
     * A CancelRequest names a backend, not a statement: one still on its way could cancel whatever the
     * connection runs next (the retry's BEGIN, another transaction's work). So before a connection
     * that was cancelled is used again, wait until the server has delivered the cancel; it then either
     * hit the attempt it was meant for or found the backend idle and was dropped.
     */
    private static void settleCancel(Work w) {
        java.util.concurrent.CompletableFuture<Void> c = w.cancelling;
        if (c == null) return;
        try {
            c.get(10, java.util.concurrent.TimeUnit.SECONDS);
        } catch (Exception e) {
            LOG.warn("cancel did not complete in 10 s: {}", e.toString());
        }
        w.cancelling = null;
    }

    /**
     * Our replica connection failed under a delivered transaction. It must still commit here, so it
     * runs again on a fresh pooled connection (the self-contained messages; the origin's client is
     * gone with its backend). If PostgreSQL itself is down, this site cannot go on until it is back.
     */
    private void brokenConnection(Txn t, Work w, Exception e) {
        LOG.warn("{}: backend connection failed ({}); running it again on a new connection", t, e.toString());
        if (w.conn != null) {
            if (w.pooled) pool.release(w.conn);
            else w.conn.close();
        }
        w.conn = null;
        w.pooled = true;
        w.messages = null;
        w.keepReplies = false;
        try {
            Thread.sleep(50);
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Our BEGIN: read committed (locks already serialize), then in one statement the origin's session
     * settings (not at the origin, whose client's own session has them), the transaction time and
     * the seed of random(). Everything is SET LOCAL, gone at the end of the block. DISCARD SEQUENCES first: a
     * sequence with CACHE n hands a backend n values at a time, and which backend runs a transaction differs between
     * sites, so a value cached by an earlier one would make this one's nextval differ; with nothing cached, each
     * transaction takes its values from the sequence itself, in delivery order (their locks serialize them).
     *
     * <p>{@code resetValues}: null on the client's own backend at the origin (its session is the client's: only the
     * timeouts are lifted); on a pooled connection, its settings after RESET ALL ({@link SessionDefaults}). There the
     * block first resets the session (nothing an earlier transaction left at session level survives), then sets only
     * the shipped settings whose value differs, and lifts a timeout only if the session has one.
     */
    static String beginSql(TxnRequest r, Map<String, String> resetValues) { return String.join("; ", beginStatements(r, resetValues)); }

    /** {@link #beginSql} statement by statement. */
    static List<String> beginStatements(TxnRequest r, Map<String, String> resetValues) {
        List<String> b = new ArrayList<>(List.of("BEGIN ISOLATION LEVEL READ COMMITTED", "DISCARD SEQUENCES"));
        List<String> calls = new ArrayList<>();
        if (resetValues == null) {
            calls.add(TxnExecutor.LIFT_TIMEOUTS_SQL);   // first, so that no timeout ends what follows
        } else {
            b.add("RESET ALL");
            calls.addAll(settingCalls(r.settings(), resetValues));
        }
        if (r.timestampMicros() != 0)
            calls.add("pg_catalog.set_config('" + org.wanrep.sql.TimeRewriting.SETTING + "', "
                    + literal(org.wanrep.sql.TimeRewriting.format(r.timestampMicros())) + ", true)");
        if (r.seed() != 0) calls.add("pg_catalog.setseed(" + seedValue(r.seed()) + ")");
        if (!calls.isEmpty()) b.add("SELECT " + String.join(", ", calls));
        return b;
    }

    /**
     * Whether the pooled session after RESET ALL already has every setting the request ships. Only then may our BEGIN and
     * the request share one query string: PostgreSQL converts a message from the client encoding and lexes all of its
     * text (standard_conforming_strings, backslash_quote) before running the first statement, so settings made inside
     * the string would come too late for the request's own text.
     */
    static boolean sessionAsShipped(TxnRequest r, Map<String, String> resetValues) {
        return resetValues != null && differing(r.settings(), resetValues).isEmpty();
    }

    /**
     * The calls that lift the timeouts a pooled session has after RESET ALL ({@code resetValues}) and set each shipped
     * setting whose value differs from it, in name order (every site alike).
     */
    private static List<String> settingCalls(Map<String, String> settings, Map<String, String> resetValues) {
        List<String> calls = new ArrayList<>();
        for (String timeout : TIMEOUTS)
            if (!"0".equals(resetValues.get(timeout))) calls.add("pg_catalog.set_config('" + timeout + "', '0', true)");
        for (Map.Entry<String, String> s : differing(settings, resetValues).entrySet())
            calls.add("pg_catalog.set_config(" + literal(s.getKey()) + ", " + literal(s.getValue()) + ", true)");
        return calls;
    }

    /**
     * The settings of {@code settings} (the role aside) whose value differs from {@code resetValues}, in name order. The
     * last answer is kept per thread by the two maps' identity: a session's requests decode to one settings map until
     * it changes one, and connections whose defaults are equal share one map ({@link SessionDefaults}).
     */
    private static java.util.SortedMap<String, String> differing(Map<String, String> settings, Map<String, String> resetValues) {
        Object[] memo = DIFFERING.get();
        if (memo[0] == settings && memo[1] == resetValues) return (java.util.SortedMap<String, String>) memo[2];
        java.util.TreeMap<String, String> differing = new java.util.TreeMap<>();
        for (Map.Entry<String, String> s : settings.entrySet())
            if (!s.getKey().equals(TxnRequest.ROLE) && !s.getValue().equals(resetValues.get(s.getKey()))) differing.put(s.getKey(), s.getValue());
        java.util.SortedMap<String, String> out = java.util.Collections.unmodifiableSortedMap(differing);
        memo[0] = settings;
        memo[1] = resetValues;
        memo[2] = out;
        return out;
    }

    private static final ThreadLocal<Object[]> DIFFERING = ThreadLocal.withInitial(() -> new Object[3]);

    /** The timeouts a replicated transaction runs without (they would only make one site retry, or stop it). */
    private static final List<String> TIMEOUTS = List.of("statement_timeout", "lock_timeout");

    /** A seed in [-1, 1] derived from the origin's random 64-bit value. */
    public static String seedValue(long seed) { return Double.toString((seed % 1_000_000_000L) / 1_000_000_000.0); }

    /** A string literal read alike whatever the replica's standard_conforming_strings (an E'' string when it has a backslash). */
    static String literal(String s) {
        String q = s.replace("'", "''");
        return q.indexOf('\\') < 0 ? "'" + q + "'" : "E'" + q.replace("\\", "\\\\") + "'";
    }

    /**
     * Sticky: an attempt not started yet, or whose request has not been sent, never runs it (see {@link Work#cancelled});
     * one whose request is on its way gets CancelRequests until it returns, since one that reaches the backend while
     * it still reads the request is dropped by PostgreSQL. A revoked attempt left running could wait for ever on row
     * locks of what the final order put before it (a prepared certified block's, say). Every cancel is followed by
     * {@link #rollback}, which ends it.
     */
    @Override public void cancel(Txn t) {
        Work w = work(t);
        synchronized (w) {
            w.cancelled = true;
            BackendConnection c = w.conn;
            if (c == null || !w.requestSent || w.cancelling != null) return;
            w.cancelling = java.util.concurrent.CompletableFuture.runAsync(() -> {
                do c.cancel(); while (stillSent(w) && pause(CANCEL_REPEAT_MS));
            }, threads);
        }
    }

    /** How often a cancelled attempt that has not returned is cancelled again. */
    static final long CANCEL_REPEAT_MS = 200;

    private static boolean stillSent(Work w) {
        synchronized (w) { return w.requestSent; }
    }

    private static boolean pause(long ms) {
        try {
            Thread.sleep(ms);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override public void commit(Txn t, Done done) {
        Work w = work(t);
        if (outsideTransaction(t.work()) && !w.fusedCommit) {   // deferred from a tentative execution: runs now
            dispatch(w, () -> done.completed(runOutsideTransaction(t, w)));
            return;
        }
        if (w.fusedCommit) {   // COMMIT went with the request: its outcome is known, report it right away
            PgError e = w.commitError;
            done.completed(e == null ? Outcome.OK : TxnExecutor.transientState(e.sqlState()) ? Outcome.RETRY : Outcome.ERROR);
            return;
        }
        commitNext(w, () -> {
            COMMITS_ALONE.increment();
            try {
                settleCancel(w);
                String record = t.recordSql();
                boolean recording = record != null && !w.positionRecorded && w.conn.status() == 'T';
                if (recording && positions != null) ReplicaPosition.ensure(positions, t.work().database());
                // the GSN's record goes with COMMIT: if it fails, COMMIT is skipped and the block stays open (status E)
                PgError e = w.conn.run(recording ? record + "; COMMIT" : "COMMIT");
                if (e != null && recording && w.conn.status() != 'I') {
                    w.conn.run("ROLLBACK");
                    fatalHandler.accept("site cannot record GSN " + t.gsn() + " of " + t + " in its replica (" + e + "); the others commit it");
                    w.commitError = PgError.error("08006", "wanrep: this site cannot record the transaction's position and stops");
                    done.completed(Outcome.ERROR);
                    return;
                }
                w.commitError = e;
                if (e == null) done.completed(Outcome.OK);
                else done.completed(TxnExecutor.transientState(e.sqlState()) ? Outcome.RETRY : Outcome.ERROR);
            } catch (IOException | RuntimeException e) {
                commitLost(t, w, e);
                done.completed(Outcome.ERROR);
            }
        });
    }

    /**
     * The connection failed after COMMIT was sent: whether it took effect here is unknown, so this
     * replica may now differ from the others (and running it again could apply it twice). The site stops.
     */
    private void commitLost(Txn t, Work w, Exception e) {
        String why = t + ": connection to the replica lost during COMMIT (" + e + "); whether it committed here is unknown";
        LOG.error("{}", why);
        w.commitError = PgError.error("08006", "wanrep: connection to the replica lost during COMMIT");
        if (w.error == null) w.error = w.commitError;
        if (w.conn != null) {
            if (w.pooled) pool.discard(w.conn);
            else w.conn.close();
            w.conn = null;
        }
        fatalHandler.accept("site replica may have diverged: " + why);
    }

    @Override public void rollback(Txn t, Done done) {
        Work w = work(t);
        dispatch(w, () -> {
            try {
                settleCancel(w);
                synchronized (w) { w.cancelled = false; }   // the cancelled attempt ends here: the next one runs
                if (w.conn != null) {
                    w.conn.run("ROLLBACK");
                    // the attempt's nextval calls stay done: put the sequences back for the next attempt (and for
                    // whatever runs before it, which the engine holds until this returns)
                    if (w.sequencePutBack != null && !w.sequencePutBack.isEmpty()) {
                        // setval to absolute values: repeating it is harmless, so a cancel still on its way
                        // (the revocation's) that lands on it is simply followed by another try
                        PgError e = null;
                        for (int i = 0; i < 20; i++) {
                            e = w.conn.run("SELECT " + w.sequencePutBack);
                            if (e == null || !TxnExecutor.transientState(e.sqlState())) break;
                        }
                        if (e != null) fatalHandler.accept("site replica cannot follow: " + t + ": putting back its sequences failed: " + e);
                    }
                }
            } catch (IOException | RuntimeException e) {
                brokenConnection(t, w, e);
            }
            done.completed(Outcome.OK);
        });
    }

    /**
     * Written relations known not to be sequences (per database): most updates skip the read. The read
     * selects the sequences among the written relations, so a set of known ones needs none, whatever the
     * combination (the study's random-table updates write a new combination of tables nearly every time,
     * which a cache of whole sets missed). Any catalog change empties it (a new serial column or
     * sequence); DDL runs alone under every table's lock.
     */
    private final Map<String, java.util.Set<String>> withoutSequences = new java.util.concurrent.ConcurrentHashMap<>();

    /** The put-back of the sequences the request may advance, read before its first attempt ("" when none). */
    private String sequencePutBack(BackendConnection conn, TxnRequest r) throws IOException {
        if (r.changesCatalog()) withoutSequences.clear();
        if (r.kind() == TxnRequest.Kind.WRITESET_LOG || !r.tables().all() && r.tables().writes().isEmpty()) return "";   // writes nothing
        java.util.Set<String> known = withoutSequences.computeIfAbsent(r.database(), d -> java.util.concurrent.ConcurrentHashMap.newKeySet());
        if (!r.tables().all() && known.containsAll(r.tables().writes())) return "";
        String q = WriteSetSql.sequenceStates(r.tables());   // (only now: most requests need no read, and it cost a twentieth of an executor)
        String calls = "";
        PgError err = null;
        // a cancel still on its way (a revocation's) may land on this read: it only reads, so read again
        for (int attempt = 0; attempt < 20; attempt++) {
            conn.send(WireMessage.query(q));
            conn.flush();
            calls = "";
            err = null;
            while (!conn.tracker().idle()) {
                WireMessage m = conn.read();
                if (m.kind() == 'E' && err == null) err = PgError.parse(m);
                if (m.kind() == 'D') {
                    String v = org.wanrep.wire.Messages.dataRowValues(m).get(0);
                    if (v != null) calls = v;
                }
            }
            if (err == null || !TxnExecutor.transientState(err.sqlState())) break;
        }
        if (err != null) throw new IOException("reading the sequences' state: " + err);
        if (calls.isEmpty() && !r.tables().all() && known.size() < 100_000) known.addAll(r.tables().writes());
        return calls;
    }

    @Override public void finish(Txn t) {
        Work w = work(t);
        BackendConnection c = w.conn;
        if (c == null || !w.pooled) return;
        w.conn = null;
        boolean resetSession = leavesSessionState(t.work().messages());
        if (!resetSession && w.cancelling == null) {   // nothing to wait for or to run: given back here, without a thread switch
            pool.release(c);
            return;
        }
        onPool(() -> {
            try {
                settleCancel(w);
                if (resetSession && !c.isBroken()) {
                    PgError e = c.run("DISCARD ALL");
                    if (e != null) {
                        // its session state would leak into the next transaction run on it: never reuse it
                        LOG.warn("DISCARD ALL failed ({}); closing the connection", e);
                        pool.discard(c);
                        return;
                    }
                }
            } catch (IOException | RuntimeException e) {
                LOG.debug("DISCARD ALL: {}", e.toString());
                pool.discard(c);
                return;
            }
            pool.release(c);
        });
    }

    /**
     * Named statements or session commands would leak into the next transaction on a pooled
     * connection (see {@link org.wanrep.sql.SessionCommands#changesSessionState}; an UPDATE's
     * SET is not one). A message that cannot be read counts as leaving state.
     */
    static boolean leavesSessionState(List<WireMessage> ms) {
        for (WireMessage m : ms) {
            try {
                if (m.kind() == 'P') {
                    if (m.payload().length == 0 || m.payload()[0] != 0) return true;   // a named statement
                    if (org.wanrep.sql.SessionCommands.changesSessionState(org.wanrep.wire.Messages.parseQuery(m))) return true;
                }
                if (m.kind() == 'Q' && org.wanrep.sql.SessionCommands.changesSessionState(m.queryText())) return true;
            } catch (RuntimeException e) {
                return true;
            }
        }
        return false;
    }

    @Override public void close() {
        threads.shutdown();
    }
}
