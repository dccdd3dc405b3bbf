package org.wanrep.txn;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.wanrep.backend.BackendException;
import org.wanrep.gcs.NotPrimaryException;
import org.wanrep.lock.TableSet;
import org.wanrep.wire.Messages;
import org.wanrep.wire.PgError;
import org.wanrep.wire.WireMessage;
import org.wanrep.writeset.WriteSet;

import java.io.EOFException;
import java.io.IOException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;

/**
 * One interactive transaction block (autocommit off: BEGIN ... COMMIT over several round trips) at its origin,
 * from its start to its end: its statement log, the exclusive lock (taken at its first write, or at COMMIT) or
 * its certification round ({@code blocks: certify}), and its commit: shipping the statement log, shipping a
 * write set (write-set policies), or PREPARE TRANSACTION then COMMIT/ROLLBACK PREPARED once certified.
 * <p>
 * Whatever a path throws, what the block holds is let go of: an exclusive lock is released (once granted, if it
 * was not yet), a delivered block's lock is ended by {@link ReplicationEngine#blockCommitted}, and once a
 * prepared transaction's certification is ordered it is resolved, or the site stops (never a guess). The session
 * calls {@link #abandon} when it ends with the block open.
 * <p>
 * The wire protocol stays with the session: the block reaches the client's backend and the client through
 * {@link Session}, so this class does no I/O of its own. Not thread-safe: the session's thread drives it.
 */
public final class InteractiveBlock {
    private static final Logger LOG = LoggerFactory.getLogger(InteractiveBlock.class);
    private static final SecureRandom RANDOM = new SecureRandom();

    /** What a block needs of its session: the client's backend (its own transaction) and the client. */
    public interface Session {
        /** The backend's transaction status as of its last ReadyForQuery: 'I', 'T' or 'E'. */
        char status();

        /**
         * Opens the backend's block with whatever is sent next, without a round trip now; {@link #status} is 'T' from
         * here (see {@code BackendConnection.deferBegin}). Only on an idle backend.
         */
        void deferBegin();

        /** Runs {@code sql} on the backend, not relayed to the client; returns its first error. */
        PgError run(String sql) throws IOException;

        /** As {@link #run}, handing every data row to {@code rows}. */
        PgError runCollecting(String sql, Consumer<List<String>> rows) throws IOException;

        /**
         * Runs each query as its own Query message, all sent at once (one round trip): for each, the command tags of
         * its statements that completed, and its first error.
         */
        List<Ran> runEach(List<String> queries) throws IOException;

        /** Sends the client's request to the backend and the answers to the client, or into {@code buffer} if not null. */
        Relayed relay(List<WireMessage> unit, List<WireMessage> buffer) throws IOException;

        /**
         * Runs {@code statements} (ours, their rows to {@code rows}), then relays the client's request to the client: sent
         * together, one round trip. A failure of ours is logged and the request then fails on the failed block, as
         * PostgreSQL would answer it; or, where ours go guarded after a deferred BEGIN, it ends the connection.
         */
        default Relayed relayAfter(List<String> statements, Consumer<List<String>> rows, List<WireMessage> unit) throws IOException {
            PgError e = runCollecting(String.join("; ", statements), rows);
            if (e != null) LOG.warn("could not set up the block: {}", e);
            return relay(unit, null);
        }

        /** Writes messages (answers buffered by {@link #relay}) to the client. */
        void toClient(List<WireMessage> messages) throws IOException;

        /** Answers the request with our error (ErrorResponse, then ReadyForQuery at its Sync). */
        void replyError(List<WireMessage> unit, PgError e) throws IOException;

        /** Answers a COMMIT with our error without relaying it, keeping the named statements it parses or closes. */
        void answerUnrelayed(List<WireMessage> unit, PgError e) throws IOException;

        /**
         * Answers a simple-query COMMIT ({@link #isPlainCommit}) that the block's resolution already carried out, as
         * PostgreSQL would have: CommandComplete COMMIT, then ReadyForQuery (the backend is idle).
         */
        default void answerCommitted(List<WireMessage> unit) throws IOException {
            toClient(List.of(Messages.commandComplete("COMMIT"), Messages.readyForQuery(status())));
        }

        /** The messages with the Parse of every named statement they use and {@code defined} lacks put first. */
        List<WireMessage> selfContained(List<WireMessage> messages, Set<String> defined);

        /** The SQL expressions that fix the transaction's replicated time and random()'s seed (for a SELECT list). */
        String timeAndSeedSql(long timestampMicros, long seed);

        /** Creates the table recording the replica's position, and the certified blocks' marks, in this database if missing. */
        void ensurePositionTable();

        /** The block changed the catalog: classification must read it again. */
        void catalogChanged();

        /** This site's name (for the reasons a site stops). */
        String site();

        /** The session's row in {@link org.wanrep.lock.TableSet#SESSION}: its transactions take effect in its order everywhere. */
        String orderKey();

        /** Whether a statement writing {@code tables} may advance a sequence (see {@code UnitClassifier.advancesSequence}). */
        boolean advancesSequence(TableSet tables);

        /** A query whose one value lists setval() calls restoring every sequence the session can see as it is now. */
        String sequenceStatesSql();

        /**
         * Runs {@code SELECT setvals} against the replica (setval is not transactional: on the block's own
         * backend if it can, else on a connection of the replica's user); throws if it could not.
         */
        void putBackSequences(String setvals) throws IOException;

        /** This site's write-set shipping, null under symmetric execution. */
        WriteSets writeSets();

        /** This site's capture of certified blocks' write sets at PREPARE, null when blocks do not certify. */
        default PreparedWriteSets preparedWriteSets() { return null; }
    }

    /** The capture of a certified block's write set at its PREPARE TRANSACTION, which its CERTIFY then carries. */
    public interface PreparedWriteSets {
        /**
         * Whether a block that begins now (it has no transaction id yet) will have its write set captured at PREPARE;
         * if not, the capture starts in the background for later blocks.
         */
        boolean capturesNow();

        /** The write set of the transaction prepared as {@code gid}, once decoded (fails if it cannot travel as one). */
        CompletableFuture<WriteSet> prepared(String gid);
    }

    /** Write-set shipping for a block under a write-set policy (primary-copy, local-copy). */
    public interface WriteSets {
        /** Makes sure this database is captured: before the block has a transaction id (a new slot waits for open ones). */
        void capture();

        /** SQL that tags the transaction for capture and checks it can travel as a write set; rows are (sequence, value). */
        String tagAndCheckSql(String tag);

        /** As {@link #tagAndCheckSql} without the tag (a certified block's write set is captured at PREPARE). */
        String checkSql();

        /** The captured write set of the transaction tagged {@code tag}, once committed. */
        CompletableFuture<WriteSet> captured(String tag);
    }

    /** What {@link Session#runTags} ran: the tags of the statements that completed, in order, and the first error (or null). */
    public record Ran(List<String> tags, PgError error) {}

    /** What a relayed request sent (COPY data included), its first error and its last command tag. */
    public record Relayed(List<WireMessage> sent, PgError error, String lastTag) {}

    /**
     * How long a statement of a certifying block waits for a lock: a block must never wait without bound, because it
     * can wait on a prepared block of this site (a prepared transaction has no backend, so PostgreSQL's deadlock
     * detector cannot see through it) whose COMMIT PREPARED waits in delivery order for an update delivered before it
     * (one that read what it wrote), while that update waits in PostgreSQL on a row the waiting block holds: a cycle
     * across the middleware and PostgreSQL. Bounding the block's waits breaks every such cycle (see
     * docs/architecture.md, "Certified interactive blocks"). Under repeatable read a block that waited for a row
     * whose holder commits fails with 40001 anyway; the timeout is also answered 40001 (see {@link #lockWaitError}).
     */
    public static final int BLOCK_LOCK_TIMEOUT_MS = 500;

    /** At most this long a certification abort waits for its site to finish what was ordered before the block. */
    static final java.time.Duration RETRY_FRESHNESS_WAIT = java.time.Duration.ofSeconds(2);
    /** Sets the bound for the block's transaction, keeping a shorter lock_timeout the session has itself. */
    private static final String BLOCK_LOCK_TIMEOUT_SQL = "pg_catalog.set_config('lock_timeout', CASE WHEN pg_catalog.current_setting('lock_timeout')::interval"
            + " BETWEEN interval '1 microsecond' AND interval '" + BLOCK_LOCK_TIMEOUT_MS + " milliseconds' THEN pg_catalog.current_setting('lock_timeout')"
            + " ELSE '" + BLOCK_LOCK_TIMEOUT_MS + "ms' END, true)";
    /** How long a certifying block that holds row locks waits for the exclusive lock when nothing commits meanwhile. */
    public static final int EXCLUSIVE_WAIT_HOLDING_ROWS_MS = 5_000;

    /** Marks written by certified blocks at this site (every thousandth also forgets old ones). */
    private static final java.util.concurrent.atomic.AtomicLong MARKS = new java.util.concurrent.atomic.AtomicLong();

    private final ReplicationEngine engine;
    private final Session session;
    private final String database;
    private final long commitsAtBegin;
    private final long timestampMicros = nowMicros();
    /** random()'s seed for the block, here at BEGIN and at every other site before its log. */
    private final long seed = RANDOM.nextLong() | 1;
    private final List<WireMessage> log = new ArrayList<>();
    /** What the other sites replay of it if it certifies and carries no write set: its log, shortened (see {@link ReplayLog}). */
    private final ReplayLog replay = new ReplayLog();
    private long logBytes;   // payload bytes of the log: held until the block ends
    private final Set<String> definedInLog = new HashSet<>();
    private RequestId exclusive;
    /** The sequences as they were when the exclusive lock was granted (setval calls), put back if the block ends unshipped. */
    private String sequencesAtGrant;
    private boolean ddl;
    /** Commits by certification unless it goes exclusive (see {@link #commitCertified}); set at BEGIN. */
    private boolean certifying;
    /** Its PREPARE will be decoded (the capture ran before it had a transaction id): its CERTIFY may carry its write set. */
    private boolean preparedCaptured;
    /** Its snapshot position: every transaction delivered up to it had finished here before its snapshot. */
    private long snapshotGsn;
    /** What its statements read and wrote, at the granularity the classifier showed (rows, tables, all). */
    private final TableSet.Union readsAndWrites = new TableSet.Union();
    private boolean wrote;
    private boolean ended;
    /** The replica's max_prepared_transactions, read at BEGIN (-1: not read). */
    private int maxPrepared = -1;
    /** The session's statement_timeout as BEGIN's set-up read it (null: not read); see {@link #liftsTimeout}. */
    private String timeoutAtBegin;
    /**
     * Whether a statement of the block ran code the classifier does not read (a function other than a built-in, a
     * trigger, a rule, a view): then COMMIT checks in PostgreSQL's locks that no sequence was advanced without the
     * cluster lock. Otherwise the classifier's own answer ({@link Session#advancesSequence}) stands, as it does for
     * every lock set, and the check (~280 us of server CPU: it reads the whole lock table) is left out.
     */
    private boolean ranUnreadCode;

    /** The last columns of a certifying block's set-up: the session's statement_timeout and max_prepared_transactions. */
    private static final String SETTINGS_READ = "pg_catalog.current_setting('statement_timeout'), pg_catalog.current_setting('max_prepared_transactions')";

    private void readSettings(List<String> row) {
        timeoutAtBegin = row.get(row.size() - 2);
        maxPrepared = Integer.parseInt(row.get(row.size() - 1));
    }

    /**
     * Whether the resolution of the prepared block lifts the session's statement_timeout first: unless it was 0 at BEGIN
     * and nothing of the block can have set it since (every unit plain, see {@link ReplayLog#plain}, no code the
     * classifier does not read). Saves two queries per commit; a cancel of the resolution lifts it anyway (see
     * {@link #resolvePrepared}).
     */
    private boolean liftsTimeout() {
        return !"0".equals(timeoutAtBegin) || !replay.plain() || ranUnreadCode;
    }

    /** Whether the statement about to run may run code the classifier does not read (then it gives no row positions). */
    private boolean statementUnread;

    /** The next statement of the block may run code the classifier does not read (see {@link #ranUnreadCode}). */
    public void ranUnreadCode(boolean unread) {
        ranUnreadCode |= unread;
        statementUnread = unread;
    }

    /**
     * The set-up (time, seed, lock bound, max_prepared_transactions) of a certifying block begun by a plain BEGIN, not
     * run yet: it goes with the block's first statement, which also chooses the isolation (see {@link #setUpAndRun}).
     */
    private String pendingSetUp;

    /** Rows locked by key before anything else of the block touched them, with their positions (see {@link Certifier}). */
    private final Map<String, Long> rowPositions = new java.util.HashMap<>();

    private InteractiveBlock(ReplicationEngine engine, Session session, String database, long commitsAtBegin) {
        this.engine = engine;
        this.session = session;
        this.database = database;
        this.commitsAtBegin = commitsAtBegin;
    }

    /**
     * A block the client's BEGIN request opened on the backend ({@code texts}: that request's statements, which
     * {@code tables} says it read). {@code commitsBefore} and {@code snapshotGsn} were read before the request was
     * relayed: the local commits, and the engine's {@link ReplicationEngine#committedThrough()}.
     */
    public static InteractiveBlock begin(ReplicationEngine engine, Session session, String database, long commitsBefore, long snapshotGsn,
                                         List<String> texts, TableSet tables) throws IOException {
        return begin(engine, session, database, commitsBefore, snapshotGsn, texts, tables, null);
    }

    /**
     * A block opened by the client's plain simple-query BEGIN ({@link #isPlainBegin}), not relayed: BEGIN and the block's
     * set-up go as one query string (one round trip where there were two), and the client gets BEGIN's answer from here.
     */
    public static InteractiveBlock beginPlain(ReplicationEngine engine, Session session, String database, long commitsBefore, long snapshotGsn,
                                              List<WireMessage> unit) throws IOException {
        return begin(engine, session, database, commitsBefore, snapshotGsn, List.of(), TableSet.of(Set.of(), Set.of()), unit);
    }

    /** BEGIN, BEGIN WORK or BEGIN TRANSACTION (a semicolon at most) as one simple Query: no options, nothing else. */
    private static final java.util.regex.Pattern PLAIN_BEGIN =
            java.util.regex.Pattern.compile("\\s*begin(?:\\s+(?:work|transaction))?\\s*;?\\s*", java.util.regex.Pattern.CASE_INSENSITIVE);

    /** Whether {@code unit} is one simple Query that only begins a block ({@link #PLAIN_BEGIN}). */
    public static boolean isPlainBegin(List<WireMessage> unit) {
        return unit.size() == 1 && unit.get(0).kind() == 'Q' && PLAIN_BEGIN.matcher(unit.get(0).queryText()).matches();
    }

    /** {@code plainBegin}: the client's BEGIN, not relayed yet (see {@link #beginPlain}), or null. */
    private static InteractiveBlock begin(ReplicationEngine engine, Session session, String database, long commitsBefore, long snapshotGsn,
                                          List<String> texts, TableSet tables, List<WireMessage> plainBegin) throws IOException {
        InteractiveBlock b = new InteractiveBlock(engine, session, database, commitsBefore);
        String text = String.join(" ", texts).toLowerCase(java.util.Locale.ROOT);
        // certification (symmetric execution): what the BEGIN request itself read counts (a driver's first statement)
        b.certifying = engine.certifiesBlocks();
        // under a write-set policy the capture of this database must run before the block's COMMIT PREPARED (normally it
        // does from the site's start: a slot made now would wait for this very transaction if it has an id already)
        if (b.certifying && session.writeSets() != null) session.writeSets().capture();
        // its write set can travel in its CERTIFY if the capture at PREPARE ran before the block has a transaction id
        b.preparedCaptured = b.certifying && session.preparedWriteSets() != null && session.preparedWriteSets().capturesNow();
        b.snapshotGsn = snapshotGsn;
        b.readsAndWrites.add(tables);
        if (plainBegin != null && b.certifying && !text.contains("isolation")) {
            // a certifying block's isolation waits for its first statement (see setUp): BEGIN goes with it (no round
            // trip of its own), answered here as PostgreSQL does
            session.deferBegin();
            b.pendingSetUp = "SELECT " + session.timeAndSeedSql(b.timestampMicros, b.seed) + ", " + BLOCK_LOCK_TIMEOUT_SQL
                    + ", " + SETTINGS_READ;
            session.toClient(List.of(Messages.commandComplete("BEGIN"), Messages.readyForQuery(session.status())));
        } else if (plainBegin != null || session.status() == 'T') {
            // repeatable read: the block's reads are one snapshot, which the exclusive grant then validates; then the
            // block's time, which its statement log carries to the other sites. One round trip: if the isolation is
            // refused (a query ran already), the block has failed either way
            String time = "SELECT " + session.timeAndSeedSql(b.timestampMicros, b.seed)
                    + (b.certifying ? ", " + BLOCK_LOCK_TIMEOUT_SQL + ", " + SETTINGS_READ : "");
            // repeatable read, certifying or not: a block that turns out read-only commits here without certification,
            // and at read committed two of its reads could see two states (read skew: history-check --seed 21 found it).
            // A block begun at read committed by its client certifies its reads, and its updates by key record the rows'
            // positions (see RowPositions)
            String setup = text.contains("isolation") ? time : "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ; " + time;
            PgError e = session.runCollecting(plainBegin != null ? "BEGIN; " + setup : setup,
                    row -> { if (b.certifying) b.readSettings(row); });
            if (e != null) LOG.warn("could not set the block's isolation and time: {}", e);
            // the client's BEGIN answered as PostgreSQL would (a failed set-up leaves the block failed, as before)
            if (plainBegin != null) session.toClient(List.of(Messages.commandComplete("BEGIN"), Messages.readyForQuery(session.status())));
        }
        return b;
    }

    /**
     * A block the backend holds open and failed, with nothing of ours in it: a {@code BEGIN; ...; COMMIT} script
     * whose replicated transaction failed, left open for the client's ROLLBACK as PostgreSQL leaves it.
     */
    public static InteractiveBlock failed(ReplicationEngine engine, Session session, String database) {
        return new InteractiveBlock(engine, session, database, engine.localCommits());
    }

    /** Whether the block ended (committed, rolled back, or its backend transaction ended): the session drops it. */
    public boolean ended() { return ended; }

    /** A temporary relation a statement of the block named (it exists at this site only), or null. */
    private String temporary;

    /** A statement of the block named the temporary relation {@code name}: the block cannot ship a log (see {@link #commit}). */
    public void usesTemporary(String name) { if (temporary == null) temporary = name; }

    /** Whether it commits by certification (so far). */
    public boolean certifying() { return certifying; }

    /** Payload bytes of client messages its log holds. */
    public long logBytes() { return logBytes; }

    // ------------------------------------------------------------------ statements

    /**
     * An update of the block: it runs here, under the exclusive lock unless it certifies. False if it did not run:
     * the exclusive lock could not be had (or the block's reads are stale), and the block failed with our error.
     */
    public boolean update(List<WireMessage> unit, List<String> texts, TableSet tables, boolean catalogChange) throws IOException {
        Set<String> firstLocked = Set.of();
        // a sequence's values are not transactional and not ordered: one advanced without the cluster lock could hand
        // this site's concurrent replicated inserts other values than every other site's, and could not be set back
        if (certifying && exclusive == null && !catalogChange && !tables.all() && !session.advancesSequence(tables)) {
            // no cluster lock: the block runs on its snapshot here and certifies at COMMIT. Flow control comes now, before
            // it writes a row: once prepared it must never wait for backlogs (its CERTIFY is not held back, see submit)
            if (!wrote) {
                try {
                    engine.admitNewWork();
                } catch (FlowControl.Throttled t) {
                    raise(unit, orderingError(t));
                    return false;
                }
            }
            firstLocked = statementUnread ? Set.of() : RowPositions.untouchedKeyedRows(texts, tables, readsAndWrites);
            readsAndWrites.add(tables);
            wrote = true;
        } else if (exclusive == null && session.status() == 'T' && !acquireExclusive(unit)) return false;
        Relayed r = setUpAndRun(unit, catalogChange, true);
        if (!firstLocked.isEmpty() && r.error() == null && RowPositions.modifiedAll(r.lastTag(), firstLocked.size(), tables)) {
            // every row it names was there and is locked now, at its newest version: read after the reply, so every
            // transaction counted here had finished writing before the lock (see Certifier)
            long g = engine.writtenThrough();
            for (String row : firstLocked) rowPositions.put(row, g);
        }
        return true;
    }

    /** Any other request of the block (a query, a session command): it runs here; a certifying block records its reads. */
    public void other(List<WireMessage> unit, TableSet tables, boolean catalogChange) throws IOException {
        if (certifying) readsAndWrites.add(tables);
        setUpAndRun(unit, catalogChange, false);
    }

    /**
     * Runs a statement of the block; the block's first, after a plain BEGIN of a certifying block, with the set-up and
     * the isolation it chooses in the same round trip. A block that writes first reads committed: it is certified
     * (or takes the exclusive path, whose check is that nothing committed here since BEGIN), so its reads are checked
     * against its snapshot position, and an update by key that waited for another block's row goes on with the
     * newest version, which its row position records (where repeatable read fails it with 40001). A block that reads
     * first may stay read-only and commit here without certification: it needs one snapshot, repeatable read.
     */
    private Relayed setUpAndRun(List<WireMessage> unit, boolean catalogChange, boolean writes) throws IOException {
        String setUp = pendingSetUp;
        pendingSetUp = null;
        return run(unit, catalogChange, writes, setUp == null ? null
                : List.of("SET TRANSACTION ISOLATION LEVEL " + (writes ? "READ COMMITTED" : "REPEATABLE READ"), setUp));
    }

    /**
     * {@code writes}: the classifier routed it as an update (else a query or session command); {@code setUp}: ours, to
     * run first in the same round trip (see {@link #setUpAndRun}), or null.
     */
    private Relayed run(List<WireMessage> unit, boolean catalogChange, boolean writes, List<String> setUp) throws IOException {
        if (catalogChange) ddl = true;
        Relayed r = setUp == null ? session.relay(unit, null)
                : session.relayAfter(setUp, this::readSettings, unit);
        replay.add(logRelayed(r), r.error() == null, !writes, statementUnread, catalogChange);
        if (session.status() == 'I') {   // the block ended by other means (cannot normally happen)
            LOG.warn("a transaction block ended without COMMIT/ROLLBACK from the client");
            end();
        }
        return r;
    }

    /** Logs what the block ran (or the failure timing caused here); returns what went into the log. */
    private List<WireMessage> logRelayed(Relayed r) {
        if (r.error() != null && nonDeterministic(r.error().sqlState())) {
            // the failure came from timing here (cancel, lock timeout...): replay the failure, not the statement
            List<WireMessage> replacement = new ArrayList<>();
            for (WireMessage m : r.sent()) if (m.kind() == 'P') replacement.add(m);
            if (!replacement.isEmpty()) replacement.add(Messages.SYNC);
            replacement.add(WireMessage.query(raiseSql(r.error())));
            return addToLog(session.selfContained(replacement, definedInLog));
        }
        return addToLog(session.selfContained(r.sent(), definedInLog));
    }

    private List<WireMessage> addToLog(List<WireMessage> ms) {
        log.addAll(ms);
        for (WireMessage m : ms) logBytes += m.payload().length;
        return ms;
    }

    /** Fails the backend's block with our error (so the client and PostgreSQL agree it failed), and answers. */
    public void raise(List<WireMessage> unit, PgError error) throws IOException {
        WireMessage raise = WireMessage.query(raiseSql(error));
        session.run(raise.queryText());
        if (exclusive != null) addToLog(List.of(raise));
        session.replyError(unit, error);
    }

    /** The error the client gets for a lock wait that ran into the certifying block's bound ({@link #BLOCK_LOCK_TIMEOUT_MS}). */
    public PgError lockWaitError(PgError e) {
        if (ended || !certifying || !e.sqlState().equals("55P03")) return e;
        // a serialization failure, retried as one
        return PgError.error("40001", "wanrep: could not serialize access: waited over " + BLOCK_LOCK_TIMEOUT_MS
                + " ms for a row held by a concurrent transaction (" + e.message() + ")").withHint("Retry the transaction.");
    }

    // ------------------------------------------------------------------ the exclusive lock

    /**
     * The block's first write: take the exclusive lock everywhere. If an update committed here since
     * BEGIN, the block's reads may be stale and it aborts with 40001 instead of writing.
     */
    private boolean acquireExclusive(List<WireMessage> unit) throws IOException {
        // the capture of this database must exist before the block has a transaction id: creating a slot
        // waits for every open transaction to end
        if (session.writeSets() != null) session.writeSets().capture();
        RequestId id = engine.nextId();
        CompletableFuture<Txn> granted = engine.submit(new TxnRequest(id, TxnRequest.Kind.EXCLUSIVE, TableSet.allTables(), database, List.of(), 0, 0));
        boolean held = false;
        try {
            if (certifying && wrote && !awaitExclusiveHoldingRows(granted)) {
                raise(unit, PgError.error("40001", "wanrep: could not serialize access: another update committed at this site since this transaction began,"
                        + " or one ordered before its exclusive lock waits on its rows").withHint("Retry the transaction."));
                return false;
            }
            granted.get();
            held = true;
        } catch (ExecutionException e) {
            raise(unit, orderingError(e.getCause()));
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EOFException("interrupted");
        } finally {
            if (!held) releaseOnceGranted(granted, id);
        }
        exclusive = id;
        if (engine.localCommits() != commitsAtBegin) {
            releaseExclusive();
            raise(unit, PgError.error("40001", "wanrep: could not serialize access: another update committed at this site since this transaction began")
                    .withHint("Retry the transaction."));
            return false;
        }
        // sequences are not transactional: if the block ends without shipping its log, what it advanced here (and
        // nowhere else) is set back, while the lock still keeps every other update away. And a sequence with CACHE n
        // may have values cached on this backend that no other site's would have: the block's log replays elsewhere
        // on a backend with none cached (the executors' BEGIN discards them), so it starts from none here too
        PgError d = session.run("DISCARD SEQUENCES");
        if (d != null) {
            end();
            raise(unit, d);
            return false;
        }
        String[] states = {null};
        PgError e = session.runCollecting(session.sequenceStatesSql(), row -> { if (!row.isEmpty()) states[0] = row.get(0); });
        if (e != null) {
            end();
            raise(unit, e);
            return false;
        }
        sequencesAtGrant = states[0];
        return true;
    }

    /**
     * An EXCLUSIVE the block gave up waiting for (or whose wait failed) is released once granted here, so that its
     * RELEASE is ordered after it (for a block holding rows the grant comes once they are free: its client's
     * ROLLBACK); off the engine's thread, which completes the future. A request that failed was never granted.
     */
    private void releaseOnceGranted(CompletableFuture<Txn> granted, RequestId id) {
        String db = database;
        granted.whenCompleteAsync((t, e) -> {
            if (e == null) engine.submit(new TxnRequest(id, TxnRequest.Kind.RELEASE, TableSet.allTables(), db, List.of(), 0, 0));
        });
    }

    /**
     * A certifying block that wrote already holds PostgreSQL row locks while it waits for the exclusive lock (a
     * catalog change, or COMMIT after advancing a sequence), and an update ordered before its EXCLUSIVE may wait on
     * those rows while the grant waits for that update: a cycle PostgreSQL cannot see. The block is doomed as soon as
     * anything commits here since its BEGIN (see the check at the grant), and in that cycle nothing ahead of it can
     * commit: so it gives up as soon as something committed, or after EXCLUSIVE_WAIT_HOLDING_ROWS_MS without the grant.
     * False if it gave up.
     */
    private boolean awaitExclusiveHoldingRows(CompletableFuture<Txn> granted) throws InterruptedException {
        long end = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(EXCLUSIVE_WAIT_HOLDING_ROWS_MS);
        while (true) {
            try {
                granted.get(50, java.util.concurrent.TimeUnit.MILLISECONDS);
                return true;
            } catch (ExecutionException e) {
                return true;   // reported by the caller's get()
            } catch (java.util.concurrent.TimeoutException e) {
                if (engine.localCommits() != commitsAtBegin || System.nanoTime() > end) return false;
            }
        }
    }

    private void releaseExclusive() {
        if (exclusive == null) return;
        try {
            engine.submit(new TxnRequest(exclusive, TxnRequest.Kind.RELEASE, TableSet.allTables(), database, List.of(), 0, 0));
        } catch (RuntimeException e) {
            LOG.debug("release of {}: {}", exclusive, e.toString());   // the other sites drop it when we leave the view
        }
        exclusive = null;
    }

    /** The block is over without shipping anything: its sequences are put back and its exclusive lock, if any, released. */
    private void end() {
        ended = true;
        try {
            putBackSequences();
        } finally {
            releaseExclusive();
        }
    }

    private void putBackSequences() {
        String s = sequencesAtGrant;
        sequencesAtGrant = null;
        if (exclusive == null || s == null || s.isEmpty()) return;
        try {
            session.putBackSequences(s);
        } catch (IOException | RuntimeException x) {
            engine.fail("site " + session.site() + ": block " + exclusive + " ended without commit, and the sequences it may have advanced here"
                    + " could not be set back (" + x + "): this replica's sequences may be ahead of the other sites'");
        }
    }

    /** The session ends with the block open (the client left, or the session failed): release what it holds. */
    public void abandon() {
        if (!ended) end();
    }

    // ------------------------------------------------------------------ ROLLBACK and COMMIT

    /** The client's ROLLBACK (or ABORT). */
    public void rollback(List<WireMessage> unit) throws IOException {
        try {
            session.relay(unit, null);
        } finally {
            end();
        }
    }

    /** The client's COMMIT (or END); {@code settings}: the session's, shipped with the block's log. */
    public void commit(List<WireMessage> unit, Map<String, String> settings) throws IOException {
        if (temporary != null && (exclusive != null || wrote) && session.status() == 'T' && (session.writeSets() == null || ddl)) {
            // its log names a relation no other site has: replayed there it would fail where it committed here
            endAtCommit(unit, PgError.error("0A000", "wanrep: this transaction used the temporary table " + temporary
                    + ", which exists in this session at this site only: the other sites cannot replay it; it was rolled back")
                    .withHint("Use a permanent table, or execution: local-copy."));
            return;
        }
        if (certifying && exclusive == null && wrote && session.status() == 'T') {
            commitCertified(unit, settings);
            return;
        }
        if (exclusive == null || session.status() == 'E') {   // read-only, released, or failed: nothing to ship
            rollback(unit);
            return;
        }
        if (session.writeSets() != null && !ddl) {
            commitShippingWriteSet(unit, settings);
            return;
        }
        RequestId id = exclusive;
        // once the log is ordered this block must commit here: the client's own timeouts, which bound its statements,
        // must not cancel our record or its COMMIT then (the others commit it; this site would have to stop)
        PgError lifted = session.run("SELECT " + TxnExecutor.LIFT_TIMEOUTS_SQL);
        if (lifted != null || session.status() != 'T') {
            try {
                if (session.status() != 'I') session.run("ROLLBACK");
            } finally {
                end();
            }
            session.answerUnrelayed(unit, lifted != null ? lifted : PgError.error("25000", "wanrep: the transaction block ended before COMMIT"));
            return;
        }
        TxnRequest log = new TxnRequest(id, TxnRequest.Kind.STATEMENT_LOG, TableSet.allTables(), database, this.log,
                timestampMicros, seed, settings);
        if (ddl) log = log.changingCatalog();
        try {
            outcome(engine.submit(log));
        } catch (ExecutionException e) {
            try {
                session.run("ROLLBACK");
            } finally {
                end();
            }
            session.replyError(unit, orderingError(e.getCause()));
            return;
        }
        // The log is delivered: every other site runs it and commits. Whatever happens to COMMIT here,
        // the lock is released (finally), and an outcome that can differ from theirs stops this site.
        boolean committed = false;
        // the client's answer waits in a buffer: only the replica's connection may fail in here (a client that
        // hung up on its COMMIT must not read as a replica whose outcome is unknown, which stops the site)
        List<WireMessage> answer = new java.util.ArrayList<>();
        try {
            // its GSN's record commits with it (ReplicaPosition); if it cannot, COMMIT rolls back and the site stops below
            String record = engine.positionSql(id);
            if (record != null) session.ensurePositionTable();
            PgError recordError = record == null ? null : session.run(record);
            if (recordError != null)
                engine.fail("site " + session.site() + ": block " + id + " cannot record its GSN in the replica (" + recordError + ")");
            Relayed r = session.relay(unit, answer);
            committed = r.error() == null && "COMMIT".equals(r.lastTag());
            // a deterministic refusal at COMMIT (a deferred constraint) refuses the log's replay alike elsewhere;
            // a refusal from timing here (serialization failure, cancel) does not
            if (!committed && (r.error() == null || nonDeterministic(r.error().sqlState())))
                engine.fail("site " + session.site() + ": block " + id + " did not commit at its origin ("
                        + (r.error() != null ? r.error() : "no COMMIT") + ") after the other sites received its log: this replica no longer follows them");
        } catch (IOException | RuntimeException e) {
            engine.fail("site " + session.site() + ": the connection to the replica failed during COMMIT of block " + id
                    + " (" + e + "), whose log the other sites commit: this replica's outcome is unknown");
            throw e;
        } finally {
            // blockCommitted ends the lock (not a RELEASE: the log is delivered)
            exclusive = null;
            ended = true;
            engine.blockCommitted(id, committed);
        }
        if (ddl) session.catalogChanged();
        session.toClient(answer);
    }

    /**
     * COMMIT of a block under a write-set policy: the block commits here (tagged for capture, after the
     * check that its writes can travel as a write set), then its write set goes through the total order
     * and the other sites apply it under the block's lock; the client hears COMMIT once it is delivered.
     * If this site fails before, the others drop the block (its origin left before its log arrived).
     */
    private void commitShippingWriteSet(List<WireMessage> unit, Map<String, String> settings) throws IOException {
        RequestId id = exclusive;
        String tag = id + "@" + engine.self();
        Map<String, Long> sequences = new java.util.TreeMap<>();
        PgError e = session.runCollecting(session.writeSets().tagAndCheckSql(tag),
                row -> { if (row.size() == 2 && row.get(0) != null && row.get(1) != null) sequences.put(row.get(0), Long.parseLong(row.get(1))); });
        if (e != null || session.status() != 'T') {
            try {
                session.run("ROLLBACK");
            } finally {
                end();
            }
            session.replyError(unit, e != null ? e : PgError.error("25000", "wanrep: the transaction block ended before COMMIT"));
            return;
        }
        List<WireMessage> replies = new ArrayList<>();
        Relayed r;
        try {
            r = session.relay(unit, replies);
        } catch (IOException | RuntimeException x) {
            // it may have committed here, and the others would never have it: this replica must not go on
            engine.fail("site " + session.site() + ": the connection to the replica failed during COMMIT of block " + id
                    + " (" + x + "), whose write set the others wait for: this replica's outcome is unknown");
            exclusive = null;
            ended = true;
            throw x;
        }
        boolean committed = r.error() == null && "COMMIT".equals(r.lastTag());
        if (!committed) {
            end();
            session.toClient(replies);
            return;
        }
        try {
            WriteSet ws = outcome(session.writeSets().captured(tag));
            WriteSetMessage m = new WriteSetMessage(id, engine.self(), true, List.of(), ws, sequences);
            TxnRequest log = new TxnRequest(id, TxnRequest.Kind.WRITESET_LOG, TableSet.allTables(), database, List.of(),
                    timestampMicros, 0, settings, true, WriteSetMessageCodec.encode(m));
            outcome(engine.submit(log));
        } catch (ExecutionException | RuntimeException x) {
            // committed here, but the others will not have it: this replica must not go on
            engine.fail("site " + session.site() + " committed block " + id + " but cannot ship its write set: "
                    + (x instanceof ExecutionException ? x.getCause() : x));
            exclusive = null;
            ended = true;
            throw new BackendException(PgError.fatal("08006", "wanrep: the transaction could not be replicated; this site is stopping"));
        }
        exclusive = null;
        ended = true;
        engine.blockCommitted(id, true);
        session.toClient(replies);
    }

    /**
     * COMMIT of a block that ran without a cluster lock: PREPARE TRANSACTION here, then one total-order
     * round ({@code CERTIFY}: its snapshot position, what it read and wrote, its statement log). Every
     * site certifies it alike; if it commits, the others replay its log under its locks in delivery order
     * and this site commits the prepared transaction once its locks are granted here; if not, it is
     * rolled back and the client gets 40001. A block that advanced a sequence (not transactional: its
     * value would differ between sites), or a replica without prepared transactions, takes the
     * exclusive path at COMMIT instead (aborting if anything committed here since BEGIN).
     * Once prepared, nothing is guessed: an unexpected failure stops the site and leaves the prepared
     * transaction for recovery (see {@code Site}).
     */
    private void commitCertified(List<WireMessage> unit, Map<String, String> settings) throws IOException {
        RequestId id = engine.nextId();
        String gid = preparedName(id, engine.self());
        boolean ships = session.writeSets() != null;
        if (!ships) {
            try {
                session.ensurePositionTable();   // and the marks' function, in a database created after the site started
            } catch (RuntimeException x) {
                endAtCommit(unit, PgError.error("58000", "wanrep: " + x.getMessage() + "; the transaction was rolled back"));
                return;
            }
        }
        // the mark that this block is in this replica (symmetric), for a restart that replays it: its GSN is not known
        // before PREPARE (a block that then takes the exclusive path leaves a mark no CERTIFY names: harmless)
        String mark = ships ? null : PositionSql.markCertified(id, MARKS.incrementAndGet() % 1000 == 0);
        String prepare = "PREPARE TRANSACTION '" + gid + "'";
        if (ships || ranUnreadCode || maxPrepared <= 0) {
            long[] check = new long[]{-1, -1};
            // one round trip: did it advance a sequence, may it be prepared, and the mark
            PgError ce = session.runCollecting("SELECT (SELECT count(*) FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_class c ON c.oid = l.relation"
                    + " WHERE l.pid = pg_catalog.pg_backend_pid() AND l.locktype = 'relation' AND c.relkind = 'S' AND l.mode = 'RowExclusiveLock'),"
                    + " pg_catalog.current_setting('max_prepared_transactions')::int"
                    + (mark == null ? "" : ", " + mark.substring("SELECT ".length())), row -> {
                check[0] = Long.parseLong(row.get(0));
                check[1] = Long.parseLong(row.get(1));
            });
            if (ce != null || session.status() != 'T') {   // the block failed here: COMMIT ends it as a rollback
                endAtCommit(unit, ce);
                return;
            }
            if (check[0] != 0 || check[1] <= 0) {
                LOG.debug("block takes the exclusive path at COMMIT: {}", check[0] != 0 ? "it advanced a sequence" : "max_prepared_transactions is 0");
                if (!acquireExclusive(unit)) return;
                commit(unit, settings);
                return;
            }
        } else {
            prepare = mark + "; " + prepare;   // one round trip: if the mark fails, nothing is prepared and the block is rolled back
        }
        // symmetric execution: its write set travels unless the block ran code the classifier does not read (a catalog
        // change in a function, say) or wrote an unlogged table (never decoded): those replay its statement log
        boolean carry = preparedCaptured && (ships || !ranUnreadCode);
        boolean[] unlogged = {false};
        // a message makes sure the decoder shows the prepared transaction (one that only wrote temporary tables has
        // no change it would print, and nothing would answer the wait for its write set)
        if (carry) prepare = "SELECT pg_catalog.pg_logical_emit_message(true, 'wanrep-prepared', '')" + "; " + prepare;
        if (carry && !ships) prepare = UNLOGGED_WRITES_SQL + "; " + prepare;
        // under a write-set policy: checked to travel as a write set (keys); the sequences it reached travel with it
        Map<String, Long> sequences = new java.util.TreeMap<>();
        if (ships) {
            PgError te = session.runCollecting(session.writeSets().checkSql(),
                    row -> { if (row.size() == 2 && row.get(0) != null && row.get(1) != null) sequences.put(row.get(0), Long.parseLong(row.get(1))); });
            if (te != null || session.status() != 'T') {
                endAtCommit(unit, te);
                return;
            }
        }
        PgError pe;
        try {
            boolean checked = !carry || ships;
            boolean[] first = {true};
            pe = checked ? session.run(prepare) : session.runCollecting(prepare, row -> {
                if (first[0]) unlogged[0] = "t".equals(row.get(0));
                first[0] = false;
            });
        } catch (IOException | RuntimeException x) {
            // whether it is prepared is not known here, and a prepared transaction outlives its connection (and a restart
            // of the replica): left alone it would hold its rows for ever; never ordered, but not resolved by guess either
            engine.fail("site " + session.site() + ": the connection to the replica failed during PREPARE TRANSACTION of block " + id
                    + " (" + x + "); a transaction '" + gid + "' left prepared was never ordered and must be rolled back");
            ended = true;
            throw x;
        }
        ended = true;   // the backend's block is over either way; what is left is the prepared transaction
        if (pe != null || session.status() != 'I') {   // refused (a deferred constraint, say): nothing is prepared
            if (session.status() != 'I') session.run("ROLLBACK");
            session.answerUnrelayed(unit, pe != null ? pe : PgError.error("25000", "wanrep: PREPARE TRANSACTION did not end the block"));
            return;
        }
        byte[] writeSet = null;
        if (carry && !unlogged[0]) {
            writeSet = capturedWriteSet(gid, id, sequences, unit, ships);
            if (writeSet == null && ships) return;   // rolled back, the client told why
        } else if (ships) {
            resolvePrepared(gid, false, id);
            session.answerUnrelayed(unit, PgError.error("58000", "wanrep: the write set of this transaction is not captured here; the transaction was rolled back")
                    .withHint("Retry the transaction."));
            return;
        }
        // the session's order too: at another site its next update must not commit before this block's apply or replay;
        // with its write set it carries no log (no site replays it)
        TxnRequest req = TxnRequest.certify(id, readsAndWrites.toTableSet().inSession(session.orderKey()), database, writeSet != null ? List.of() : replay.shipped(log),
                timestampMicros, seed, settings, snapshotGsn, rowPositions, ships, writeSet);
        Txn t;
        try {
            t = outcome(engine.submit(req));
        } catch (ExecutionException x) {
            if (engine.stopped()) {
                // the site is stopping: whether the others certified it is not known here, so it stays prepared (a restart
                // resolves it from the total order); rolling it back here would lose a block the others committed
                throw new BackendException(PgError.fatal("57P01", "wanrep: site " + session.site() + " stopped while transaction " + gid
                        + " was being certified; its outcome is decided by the others"));
            }
            // never ordered (flow control, not in the primary component, undeliverable): no site has it
            resolvePrepared(gid, false, id);
            session.answerUnrelayed(unit, orderingError(x.getCause()));
            return;
        }
        if (!t.certification().commit()) {
            resolvePrepared(gid, false, id);
            // the client retries at once (pgbench, ORMs): a retry whose snapshot still missed what the block conflicted
            // with would abort again on the same rows, for certain. So the 40001 goes once every transaction ordered
            // before the block has finished here (it no longer holds rows they could wait on); bounded, it is a hint only
            try {
                engine.awaitFinishedThrough(t.gsn() - 1, RETRY_FRESHNESS_WAIT);
            } catch (InterruptedException x) {
                Thread.currentThread().interrupt();
            }
            session.answerUnrelayed(unit, PgError.error("40001", "wanrep: could not serialize access due to concurrent update (" + t.certification().reason() + ")")
                    .withHint("Retry the transaction."));
            return;
        }
        // certified everywhere, and this site's locks are granted: commit it here; its locks end whatever happens
        boolean committed = false;
        // a plain simple-query COMMIT (psql, pgbench, psycopg) is answered here once COMMIT PREPARED is done: one round
        // trip less than relaying it to an empty block that the resolution would open for it
        boolean answerHere = isPlainCommit(unit);
        try {
            committed = resolvePrepared(gid, true, id, !answerHere);
        } finally {
            engine.blockCommitted(id, committed);
        }
        LOG.debug("block {} committed by certification", id);
        if (answerHere && committed && session.status() == 'I') {
            session.answerCommitted(unit);
            return;
        }
        // answer the client's own COMMIT (extended, or with more in its text) as PostgreSQL does: on an empty block, which
        // the resolution opened (unless that last step failed)
        if (session.status() != 'T') session.run("BEGIN");
        session.relay(unit, null);
    }

    /** The block cannot commit (it failed here, or a check before PREPARE refused it): rolled back, the client told why. */
    private void endAtCommit(List<WireMessage> unit, PgError error) throws IOException {
        try {
            if (session.status() == 'T') session.run("ROLLBACK");
        } finally {
            end();
        }
        session.answerUnrelayed(unit, error != null ? error : PgError.error("25000", "wanrep: the transaction block ended before COMMIT"));
    }

    /** COMMIT or END, with WORK or TRANSACTION and a semicolon at most: nothing else to run, no notice to give. */
    private static final java.util.regex.Pattern PLAIN_COMMIT =
            java.util.regex.Pattern.compile("\\s*(?:commit|end)(?:\\s+(?:work|transaction))?\\s*;?\\s*", java.util.regex.Pattern.CASE_INSENSITIVE);

    /** Whether {@code unit} is one simple Query that only commits ({@link #PLAIN_COMMIT}). */
    static boolean isPlainCommit(List<WireMessage> unit) {
        return unit.size() == 1 && unit.get(0).kind() == 'Q' && PLAIN_COMMIT.matcher(unit.get(0).queryText()).matches();
    }

    /** Whether the block wrote an unlogged table (logical decoding never sees it): one row, t or f. */
    private static final String UNLOGGED_WRITES_SQL = "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_class c ON c.oid = l.relation"
            + " WHERE l.pid = pg_catalog.pg_backend_pid() AND l.locktype = 'relation' AND l.mode = 'RowExclusiveLock' AND c.relpersistence = 'u')";

    /**
     * The block's write set as its origin's capture decoded it at PREPARE, encoded for its CERTIFY. If it cannot be had:
     * under symmetric execution null (the block's statement log travels instead); under a write-set policy, which has no
     * other way, the prepared transaction is rolled back (nothing was ordered), the client told why, and null.
     */
    private byte[] capturedWriteSet(String gid, RequestId id, Map<String, Long> sequences, List<WireMessage> unit, boolean ships) throws IOException {
        try {
            WriteSet ws = outcome(session.preparedWriteSets().prepared(gid));
            return WriteSetMessageCodec.encode(new WriteSetMessage(id, engine.self(), true, List.of(), ws, sequences));
        } catch (ExecutionException | RuntimeException x) {
            Throwable cause = x instanceof ExecutionException ? x.getCause() : x;
            if (!ships) {
                LOG.debug("block {}: no write set captured at PREPARE ({}); its statement log travels", id, cause.toString());
                return null;
            }
            resolvePrepared(gid, false, id);
            PgError e = cause instanceof java.sql.SQLException q && q.getSQLState() != null
                    ? PgError.error(q.getSQLState(), "wanrep: " + q.getMessage() + "; the transaction was rolled back")
                    : PgError.error("58000", "wanrep: the write set of this transaction could not be captured (" + cause.getMessage() + "); it was rolled back");
            session.answerUnrelayed(unit, e);
            return null;
        }
    }

    /**
     * The outcome of a request that is out: waited for without heeding interrupts, since giving up on it would leave its
     * lock (and a prepared transaction) held; the engine completes every such future (delivered, undeliverable, or the
     * site stopping).
     */
    private static <T> T outcome(CompletableFuture<T> f) throws ExecutionException {
        try {
            return f.join();
        } catch (java.util.concurrent.CompletionException | java.util.concurrent.CancellationException e) {
            throw new ExecutionException(e.getCause() != null ? e.getCause() : e);
        }
    }

    /**
     * The queries that resolve a prepared block on the client's backend, sent at once: the decision is the group's, so
     * the client's statement_timeout (a session setting, outside any block here) is lifted first and put back after
     * ({@code lift}; not needed when it is 0, see {@link #liftsTimeout}). COMMIT/ROLLBACK PREPARED is a query of its own
     * (it cannot run inside even an implicit transaction block); {@link #resolutionIndex} says which. If the lift was
     * cancelled, the resolution may be cancelled too: it then did nothing, and all three go again. {@code reopen}: a
     * BEGIN after it, for the client's COMMIT to be relayed to; {@code lift}: with the lifting and putting back of
     * statement_timeout.
     */
    static List<String> resolveSql(String gid, boolean commit, boolean reopen, boolean lift) {
        String resolve = (commit ? "COMMIT" : "ROLLBACK") + " PREPARED '" + gid.replace("'", "''") + "'";
        if (!lift) return reopen ? List.of(resolve, "BEGIN") : List.of(resolve);
        return List.of("SELECT pg_catalog.set_config('" + SAVED_TIMEOUT + "', pg_catalog.current_setting('statement_timeout'), false),"
                        + " pg_catalog.set_config('statement_timeout', '0', false)",
                resolve,
                "SELECT pg_catalog.set_config('statement_timeout', pg_catalog.current_setting('" + SAVED_TIMEOUT + "'), false)"
                        // a committed block answers the client's own COMMIT on an empty block (see commitCertified)
                        + (reopen ? "; BEGIN" : ""));
    }

    /** Which query of {@link #resolveSql} is COMMIT/ROLLBACK PREPARED. */
    static int resolutionIndex(boolean lift) { return lift ? 1 : 0; }

    /** Where {@link #resolveSql} keeps the session's statement_timeout meanwhile (our own prefix: never shipped). */
    public static final String SAVED_TIMEOUT = "wanrep.saved_statement_timeout";

    /**
     * COMMIT or ROLLBACK PREPARED, in one round trip with the lifting of the session's timeout ({@link #resolveSql})
     * when it may be set; a failure stops the site (the others decided alike and went on).
     */
    private boolean resolvePrepared(String gid, boolean commit, RequestId id) throws IOException {
        return resolvePrepared(gid, commit, id, commit);
    }

    private boolean resolvePrepared(String gid, boolean commit, RequestId id, boolean reopen) throws IOException {
        try {
            PgError e = null;
            boolean lift = liftsTimeout();
            for (int attempt = 0; attempt < 10; attempt++) {
                List<Ran> ran = session.runEach(resolveSql(gid, commit, reopen, lift));
                e = ran.get(resolutionIndex(lift)).error();
                if (e == null) {
                    if (lift && (ran.get(0).error() != null || ran.get(2).error() != null))
                        LOG.warn("block {}: the session's statement_timeout was not lifted or put back: {} {}", id, ran.get(0).error(), ran.get(2).error());
                    return true;
                }
                if (!e.sqlState().equals("57014")) break;   // a cancel (the client's timeout, the lift having failed) changed nothing
                LOG.debug("block {}: resolving it was cancelled ({}): again, the timeout lifted", id, e);
                lift = true;
                // the BEGIN sent after it ran all the same: COMMIT/ROLLBACK PREPARED cannot run inside a block
                if (session.status() != 'I') session.run("ROLLBACK");
            }
            engine.fail("site " + session.site() + ": " + (commit ? "COMMIT" : "ROLLBACK") + " PREPARED of block " + id + " failed (" + e
                    + ") after every site certified it: this replica no longer follows the others");
        } catch (IOException | RuntimeException x) {
            engine.fail("site " + session.site() + ": the connection to the replica failed resolving prepared block " + id + " (" + x
                    + "); it stays prepared for recovery");
            throw x;
        }
        throw new BackendException(PgError.fatal("08006", "wanrep: the transaction could not be completed; this site is stopping"));
    }

    // ------------------------------------------------------------------ shared with the session

    /** A prepared transaction's name: the request and this member (site and incarnation), unique across restarts. */
    public static String preparedName(RequestId id, String member) {
        return ("wanrep:" + id + "@" + member).replace("'", "");
    }

    /** Whether an error can come from timing at one site (cancel, lock timeout, serialization...), not from the statement. */
    public static boolean nonDeterministic(String sqlState) {
        return sqlState.startsWith("57") || sqlState.startsWith("53") || sqlState.equals("40001") || sqlState.equals("40P01")
                || sqlState.equals("55P03") || sqlState.startsWith("08");
    }

    /** A DO block that raises {@code e}: fails a transaction with our error, here and where a log replays it. */
    public static String raiseSql(PgError e) {
        String msg = e.message().replace("$", "");
        return "DO $wanrep$BEGIN RAISE EXCEPTION USING ERRCODE = '" + e.sqlState() + "', MESSAGE = '" + msg.replace("'", "''") + "'"
                + (e.hint() == null ? "" : ", HINT = '" + e.hint().replace("$", "").replace("'", "''") + "'") + "; END$wanrep$";
    }

    /** The client's error for a request the engine could not order (or whose ordering failed). */
    public static PgError orderingError(Throwable cause) {
        if (cause instanceof FlowControl.Throttled t)
            return PgError.error(t.sqlState(), t.getMessage())
                    .withHint("A site executes delivered updates slower than they are ordered; retry later. Nothing was ordered.");
        if (cause instanceof NotPrimaryException)
            return PgError.error("57P03", "wanrep: this site is not in the primary component: " + cause.getMessage())
                    .withHint("Update transactions resume when a majority of sites is reachable; connect to a site of the majority.");
        return PgError.error("08006", "wanrep: the transaction could not be ordered: " + cause.getMessage());
    }

    /** Now, in microseconds since the epoch (the replicated time of a transaction). */
    public static long nowMicros() {
        java.time.Instant i = java.time.Instant.now();
        return i.getEpochSecond() * 1_000_000L + i.getNano() / 1000;
    }
}
