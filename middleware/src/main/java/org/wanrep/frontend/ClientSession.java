package org.wanrep.frontend;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.wanrep.backend.BackendConnection;
import org.wanrep.backend.BackendException;
import org.wanrep.exec.WireTxnExecutor;
import org.wanrep.lock.TableSet;
import org.wanrep.sql.Route;
import org.wanrep.sql.TimeRewriting;
import org.wanrep.sql.UnitAnalysis;
import org.wanrep.sql.UnitClassifier;
import org.wanrep.txn.InteractiveBlock;
import org.wanrep.txn.TxnRequest;
import org.wanrep.wire.Messages;
import org.wanrep.wire.PgError;
import org.wanrep.wire.ProtocolException;
import org.wanrep.wire.WireMessage;
import org.wanrep.wire.WireStream;

import java.io.EOFException;
import java.io.IOException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

/**
 * One client connection: the PostgreSQL server side of the protocol in front of a dedicated
 * backend connection to this site's replica. Requests (a simple Query, or extended messages up to
 * Sync or Flush) are routed by their {@link UnitAnalysis}: local ones are relayed; autocommit updates
 * are ordered by the group and executed at every site (here on this backend, replies buffered until
 * the local COMMIT); interactive blocks run here, their protocol (exclusive lock or certification, log,
 * commit, release) owned by {@link InteractiveBlock} (see {@link org.wanrep.txn.ReplicationEngine}).
 * The startup is {@link SessionStartup}'s, the named statements {@link NamedStatements}', COPY data
 * {@link CopyFromClient}'s; a block sees this session through {@link BlockSession}.
 */
public final class ClientSession implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(ClientSession.class);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final SiteContext ctx;
    private final WireStream client;
    private final SessionStartup startup;
    private BackendConnection backend;
    private CancelRegistry.Key key;
    private String database;
    /** The user this session authenticated as. */
    private String sessionUser;
    private final NamedStatements statements = new NamedStatements();
    /** Immutable, replaced when they change: every update ships this very map (its encoding is kept by identity). */
    private Map<String, String> settings = Map.of();
    private SessionSettings sessionSettings;
    /** {@link SessionSettings#reads()} when {@link #settings} was last copied from it (-1: never). */
    private long settingsCopied = -1;
    /** {@link org.wanrep.txn.ReplicationEngine#transfers()} when the backend was opened. */
    private long transfersAtOpen;
    private InteractiveBlock block;   // the interactive block in progress, if any
    /** Temporary relations this session created (sql.TempRelations): they exist here only, in this session. */
    private final java.util.Set<String> tempRelations = new java.util.HashSet<>();
    private final BlockSession blockSession;
    private boolean discardUntilSync;
    private WireMessage pushedBack;
    private volatile boolean relaying;
    private String role;   // clientRoles: the role this session's updates run as at every site
    /** This session's share of the site's budget for buffered client messages (see {@link ClientLimits}). */
    private final ClientLimits.SessionShare share;
    private final CopyFromClient copy;
    private boolean authenticated;

    public ClientSession(SiteContext ctx, WireStream client) { this(ctx, client, SessionSecurity.NONE); }

    /** With TLS configured, an SSLRequest is answered 'S' and the session goes on inside TLS (see {@link SessionSecurity}). */
    public ClientSession(SiteContext ctx, WireStream client, SessionSecurity security) {
        this.ctx = ctx;
        this.client = client;
        this.startup = new SessionStartup(ctx, client, security);
        this.share = new ClientLimits.SessionShare(ctx.limits().budget());
        this.blockSession = new BlockSession(this, ctx);
        this.copy = new CopyFromClient(client, () -> share.settle(retainedBytes()), this::outOfMemory);
    }

    @Override public void run() {
        ClientLimits limits = ctx.limits();
        boolean starting = true;   // holds a place among the connections in their startup (ProxyServer took it)
        // authentication_timeout: a connection that has not finished its startup by then is closed
        java.util.concurrent.ScheduledFuture<?> deadline = limits.timer().schedule(client::close, limits.authTimeoutMs(),
                java.util.concurrent.TimeUnit.MILLISECONDS);
        try {
            client.limit(ClientLimits.MAX_MESSAGE_BEFORE_AUTH, null);   // nothing buffered before authentication is large
            boolean started = startup();
            deadline.cancel(false);
            limits.started();
            starting = false;
            if (!started) return;
            authenticated = true;
            client.limit(limits.maxMessage(), share);
            while (true) {
                List<WireMessage> unit = readUnit();
                if (unit == null) return;
                if (!unit.isEmpty()) handle(unit);
                unit = null;
                share.settle(retainedBytes());   // the request's messages are let go of
                client.flush();
            }
        } catch (EOFException e) {
            LOG.debug("client closed the connection");
        } catch (java.net.SocketTimeoutException e) {
            LOG.debug("session idle for {} ms", limits.idleTimeoutMs());
            sendFatal(PgError.fatal("57P05", "terminating connection due to idle-session timeout"));
        } catch (BackendException e) {
            LOG.warn("session ends: {}", e.getMessage());
            sendFatal(e.error());
        } catch (WireStream.MessageTooLongException e) {
            // the rest of the message cannot be skipped reliably (the client may never send it): the connection ends
            LOG.info("session ends: {}", e.getMessage());
            if (authenticated) sendFatal(PgError.fatal("54000", "wanrep: message of " + e.length + " bytes is longer than the "
                    + e.max + " accepted (proxy.max_message_mb)"));
            else sendFatal(PgError.fatal("08P01", "invalid message length"));
        } catch (WireStream.OverBudgetException e) {
            sendFatal(outOfMemory(e));
        } catch (IOException | ProtocolException e) {
            LOG.debug("session ends: {}", e.toString());
            if (e instanceof ProtocolException) sendFatal(PgError.fatal("08P01", e.getMessage()));
            // a state transfer since the backend opened dropped its database (WITH FORCE): as PostgreSQL answers while it
            // cannot accept connections, so the client knows to connect again (a client already gone just misses it)
            else if (backend != null && ctx.engine().transfers() != transfersAtOpen)
                sendFatal(PgError.fatal("57P03", "wanrep: this site's replica was replaced by a state transfer while the session was open; connect again"));
        } catch (RuntimeException e) {
            LOG.error("session failed", e);
            sendFatal(PgError.fatal("XX000", "wanrep internal error: " + e));
        } catch (StackOverflowError e) {
            // recovered: the session ends, its stack is gone; the site goes on
            LOG.error("session ends: stack overflow", e);
            sendFatal(PgError.fatal("54001", "stack depth limit exceeded"));
        } catch (OutOfMemoryError e) {
            // recovered: what this session held is released when it ends; the budget keeps buffered requests below the heap
            LOG.error("session ends: out of memory ({})", e.getMessage());
            sendFatal(PgError.fatal("53200", "out of memory"));
        } finally {
            deadline.cancel(false);
            if (starting) limits.started();
            cleanup();
        }
    }

    /** Bytes of client messages this session holds beyond the request in hand: named statements, the block's log. */
    private long retainedBytes() { return statements.bytes() + (block == null ? 0 : block.logBytes()); }

    private PgError outOfMemory(WireStream.OverBudgetException e) {
        ClientLimits.Budget b = ctx.limits().budget();
        return PgError.error("53200", "out of memory").withDetail("wanrep: " + e.getMessage() + " (proxy.buffer_budget_mb: "
                + (b.capacity() >> 20) + " MB for the requests all sessions of this site buffer)");
    }

    // ------------------------------------------------------------------ startup

    /** The startup ({@link SessionStartup}), then AuthenticationOk, the replica's parameters and our BackendKeyData. */
    private boolean startup() throws IOException {
        SessionStartup.Opened o = startup.open();
        if (o == null) return false;
        sessionUser = o.user();
        database = o.database();
        role = o.role();
        sessionSettings = o.settings();
        transfersAtOpen = o.transfersAtOpen();
        backend = o.backend();
        client.write(Messages.AUTH_OK);
        for (Map.Entry<String, String> p : backend.parameters().entrySet()) client.write(Messages.parameterStatus(p.getKey(), p.getValue()));
        key = ctx.cancels().register(this);
        client.write(Messages.backendKeyData(key.pid(), key.secret()));
        client.write(Messages.readyForQuery('I'));
        client.flush();
        refreshSettings();
        return true;
    }

    // ------------------------------------------------------------------ requests

    /**
     * Reads messages up to a request boundary: a Query, a Sync or a Flush. Null on Terminate. Outside a
     * transaction, a client silent for {@code proxy.idle_session_timeout_ms} ends the session (57P05).
     * A message the budget has no room for is refused with 53200 and the request dropped (an empty list).
     */
    private List<WireMessage> readUnit() throws IOException {
        int idle = ctx.limits().idleTimeoutMs();
        boolean idleWait = idle > 0 && block == null && backend.status() == 'I';
        if (idleWait) client.readTimeout(idle);
        try {
            return readUnitMessages();
        } catch (WireStream.OverBudgetException e) {
            pushedBack = null;
            share.settle(retainedBytes());   // drop what the request buffered so far
            if (discardUntilSync || e.type == 'd') return List.of();   // dropped anyway
            List<WireMessage> refused = List.of(WireMessage.of(e.type == 'Q' ? 'Q' : 'P', new byte[0]));
            if (block != null && backend.status() == 'T' && !backend.tracker().skippingToSync()) block.raise(refused, outOfMemory(e));
            else replyError(refused, outOfMemory(e));
            return List.of();
        } finally {
            if (idleWait) client.readTimeout(0);
        }
    }

    private List<WireMessage> readUnitMessages() throws IOException {
        List<WireMessage> unit = new ArrayList<>();
        while (true) {
            WireMessage m;
            if (pushedBack != null) {
                m = pushedBack;
                pushedBack = null;
            } else m = client.read();
            switch (m.kind()) {
                case 'X' -> { return null; }
                case 'Q', 'F' -> {
                    if (!unit.isEmpty()) {
                        // extended messages without Sync before a Query (pgjdbc closes a statement so after a failed
                        // COMMIT): PostgreSQL answers them with the Query's; relayed alone they need a Flush to be answered
                        pushedBack = m;
                        unit.add(Messages.FLUSH);
                        return unit;
                    }
                    unit.add(m);
                    return unit;
                }
                case 'S', 'H' -> {
                    // PostgreSQL answers a Sync or Flush with a payload "invalid message format" and, for a Flush, then
                    // ignores everything up to a Sync, a Query too: relayed, the session waited for ever on the answer to
                    // its next request (ResourceBoundsTest.protocolFuzz seed 38728568304240). A broken client: it ends.
                    if (m.payload().length != 0)
                        throw new ProtocolException("invalid message format: a " + (m.kind() == 'S' ? "Sync" : "Flush") + " message with "
                                + m.payload().length + " bytes of content");
                    unit.add(m);
                    return unit;
                }
                case 'd', 'c', 'f' -> { }   // copy messages outside COPY: ignored, as PostgreSQL does
                case 'P', 'B', 'D', 'E', 'C' -> unit.add(m);
                default -> throw new ProtocolException("invalid frontend message type '" + m.kind() + "'");
            }
        }
    }

    private void handle(List<WireMessage> unit) throws IOException {
        if (discardUntilSync) {   // after an error of ours in an extended request
            if (last(unit).kind() == 'S') {
                discardUntilSync = false;
                client.write(Messages.readyForQuery(backend.status()));
            }
            return;
        }
        if (backend.tracker().skippingToSync()) {
            // an error in an extended request that had no Sync: PostgreSQL ignores everything up to the Sync, and so do
            // we (a request of ours would never be answered); the Sync itself goes to PostgreSQL, which answers it
            if (last(unit).kind() == 'S') relay(List.of(Messages.SYNC));
            return;
        }
        if (unit.get(0).kind() == 'F') {
            replyError(unit, PgError.error("0A000", "wanrep: the function-call protocol message is not supported"));
            return;
        }
        if (unit.size() == 1 && unit.get(0).kind() == 'Q' && answerOwnCommand(unit.get(0).queryText())) return;
        if (unit.get(0).kind() == 'P' && answerOwnCommandExtended(unit)) return;
        unit = TimeRewriting.rewrite(unit);
        if (block == null && unit.size() == 1 && unit.get(0).kind() == 'Q') {
            String inner = WrappedBlock.inner(unit.get(0).queryText());
            if (inner != null) {   // BEGIN; ...; COMMIT in one request, as schema scripts and psql -c are written
                if (!servesData(unit)) return;
                runWrappedBlock(unit, inner);
                maybeRefreshSettings(List.of(inner));
                return;
            }
        }
        boolean executes = hasKind(unit, 'Q') || hasKind(unit, 'E');
        List<String> texts = executes ? statements.texts(unit) : List.of();
        UnitAnalysis a = executes ? ctx.classifiers().forDatabase(database).analyze(texts) : UnitAnalysis.local();
        if ((a.route() == Route.UPDATE || ctx.lockedQueries()) && !a.tables().all() && hasKind(unit, 'B')) {
            // a prepared statement's rows show in the values bound to it: row locks instead of its tables
            UnitAnalysis bound = ctx.classifiers().forDatabase(database).analyze(statements.texts(unit, true));
            if (bound.route() == a.route()) a = bound;
        }
        // paused, cut off or failed: this replica may be stale, so it answers nothing from it (session commands
        // such as the SETs a driver sends at connect, which read no table, still work); an autocommit update
        // answered after uniform delivery needs no lease (see ReplicationEngine.ordersUpdatesWithoutLease)
        boolean orderedAnswer = block == null && a.route() == Route.UPDATE && ctx.engine().ordersUpdatesWithoutLease();
        // current() first: a current site serves anything, and splitting every request into statements to find
        // session commands was a sixth of the proxy's CPU under pgbench -S
        if (!orderedAnswer && !ctx.engine().current() && !sessionCommandsOnly(texts) && !servesData(unit)) return;
        if (a.route() == Route.REFUSED) {
            if (block != null) block.raise(unit, a.error());
            else replyError(unit, a.error());
            return;
        }
        // a temporary relation exists in this session at this site only: no other site can run what names it
        String temp = null;
        if (ctx.writeSets() == null) {   // a write-set policy ships what the executor wrote, temporary tables aside
            temp = org.wanrep.sql.TempRelations.mentioned(texts, tempRelations);
            for (String t : texts) tempRelations.addAll(org.wanrep.sql.TempRelations.created(t));
        }
        if (temp != null) {
            if (block != null) block.usesTemporary(temp);   // it may read and write it; it cannot ship a log that does
            else if (a.route() == Route.UPDATE) {
                if (org.wanrep.sql.TempRelations.onlyTemporary(a.tables(), tempRelations)) a = new UnitAnalysis(Route.LOCAL, a.tables(), a.random(), a.timeFunctions(), a.catalogChange(), null);   // session-local writes
                else {
                    replyError(unit, PgError.error("0A000", "wanrep: this update uses the temporary table " + temp
                            + ", which exists in this session at this site only: the other sites cannot run it")
                            .withHint("Use a permanent table (or VALUES, or a parameter), or execution: local-copy."));
                    return;
                }
            }
        }
        if (block == null) {
            if (a.route() == Route.UPDATE && unit.get(0).kind() != 'Q' && last(unit).kind() != 'S') {
                // its implicit transaction ends at a Sync that has not come (a Flush, or a Query cut it short): replicated now,
                // a failure in it would leave the backend skipping everything (our COMMIT included) until that Sync, and the
                // session stuck under its locks
                replyError(unit, PgError.error("0A000", "wanrep: an update in the extended protocol must end with Sync"));
                return;
            }
            switch (a.route()) {
                case UPDATE -> replicate(unit, a);
                case BEGIN -> {
                    long before = ctx.engine().localCommits();
                    // before anything of the block runs (pgjdbc sends its BEGIN with the first statement): every
                    // transaction up to this position is visible to all the block's reads
                    long snapshot = ctx.engine().committedThrough();
                    if (InteractiveBlock.isPlainBegin(unit) && backend.status() == 'I') {
                        // psql, pgbench, psycopg: BEGIN and the block's set-up in one round trip
                        block = InteractiveBlock.beginPlain(ctx.engine(), blockSession, database, before, snapshot, unit);
                    } else {
                        relay(unit);
                        if (backend.status() != 'I') block = InteractiveBlock.begin(ctx.engine(), blockSession, database, before, snapshot, statements.texts(unit), a.tables());
                    }
                    if (block != null && block.certifying()) block.ranUnreadCode(ctx.classifiers().forDatabase(database).mayRunUnreadCode(texts, a.tables()));
                }
                default -> localRequest(unit, a);
            }
        } else {
            if (block.certifying() && (a.route() == Route.UPDATE || a.route() == Route.LOCAL))
                block.ranUnreadCode(ctx.classifiers().forDatabase(database).mayRunUnreadCode(texts, a.tables()));
            switch (a.route()) {
                case COMMIT -> block.commit(unit, settings);
                case ROLLBACK -> block.rollback(unit);
                case UPDATE -> {
                    if (!block.update(unit, texts, a.tables(), a.catalogChange())) return;   // refused: the block failed
                }
                default -> block.other(unit, a.tables(), a.catalogChange());
            }
            if (block.ended()) block = null;
        }
        maybeRefreshSettings(texts);
    }

    /** A read-only or session-local request: relayed, under middleware read locks if so configured. */
    private void localRequest(List<WireMessage> unit, UnitAnalysis a) throws IOException {
        Object lock = null;
        if (ctx.lockedQueries() && !a.tables().reads().isEmpty()) {
            try {
                lock = ctx.engine().lockLocal(a.tables(), ctx.lockTimeout());
            } catch (InterruptedException | java.util.concurrent.TimeoutException e) {
                replyError(unit, PgError.error("55P03", "wanrep: could not obtain middleware read locks within " + ctx.lockTimeout().toMillis() + " ms"));
                return;
            }
        }
        try {
            relay(unit);
        } finally {
            if (lock != null) ctx.engine().unlockLocal(lock);
        }
    }

    /**
     * A whole transaction block in one Query: its inner statements are one transaction like any
     * multi-statement request (read-only ones are relayed as sent); the client gets the answers of
     * BEGIN and COMMIT around theirs, or, after an error, a failed block to roll back, as PostgreSQL does.
     */
    private void runWrappedBlock(List<WireMessage> unit, String inner) throws IOException {
        UnitAnalysis a = ctx.classifiers().forDatabase(database).analyze(List.of(inner));
        switch (a.route()) {
            case REFUSED -> replyError(unit, a.error());
            case UPDATE -> replicate(List.of(WireMessage.query(inner)), a, true);
            default -> localRequest(unit, a);
        }
    }

    /** An autocommit update: ordered, run at every site, answered after the local COMMIT. */
    private void replicate(List<WireMessage> unit, UnitAnalysis a) throws IOException { replicate(unit, a, false); }

    /** As {@link #replicate(List, UnitAnalysis)}; {@code wrapped}: the client sent it between BEGIN and COMMIT in the same Query. */
    private void replicate(List<WireMessage> unit, UnitAnalysis a, boolean wrapped) throws IOException {
        PgError refused = updateRefusal(unit);
        if (refused != null) {
            replyError(unit, refused);
            return;
        }
        if (CopyFromClient.isFromStdin(unit)) {
            CopyFromClient.Gathered g = copy.gather(backend, unit);
            if (g.refused() != null) {
                replyError(unit, g.refused());
                return;
            }
            unit = g.request();
        }
        long ts = nowMicros();
        long seed = RANDOM.nextLong() | 1;   // always: a function body may call random() where the classifier cannot see it
        List<WireMessage> local = unit;
        TxnRequest r = new TxnRequest(ctx.engine().nextId(), TxnRequest.Kind.AUTOCOMMIT, a.tables().inSession(orderKey()), database,
                statements.selfContained(local, new HashSet<>()), ts, seed, settings);
        r = a.catalogChange() ? r.changingCatalog() : r.shippingWriteSet();   // DML: a write-set policy may run it at one site
        int inserted = r.messages().size() - local.size();
        WireTxnExecutor.OriginWork w = new WireTxnExecutor.OriginWork(backend, local);
        org.wanrep.txn.Txn t;
        try {
            java.util.concurrent.CompletableFuture<org.wanrep.txn.Txn> f = ctx.engine().submit(r, w);
            w.runUntil(f);   // this thread runs the transaction's work on its backend, as it waits anyway
            t = f.get();
        } catch (ExecutionException e) {
            replyError(unit, InteractiveBlock.orderingError(e.getCause()));
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EOFException("interrupted");
        }
        statements.note(local);
        List<WireMessage> replies;
        PgError commitError;
        if (t.applied() != null) {
            // another site executed it: its replies came with the write set (its error included)
            replies = t.applied().replies().subList(Math.min(inserted, t.applied().replies().size()), t.applied().replies().size());
            commitError = null;
            keepStatementState(local);
        } else {
            if (w.movedToPool()) throw new BackendException(PgError.fatal("08006", "wanrep: the connection to the replica failed; the transaction committed"));
            replies = w.replies();
            commitError = w.commitError();
        }
        boolean ready = false;
        PgError failed = commitError;
        if (wrapped) client.write(Messages.commandComplete("BEGIN"));
        for (WireMessage m : replies) {
            if (m.kind() == 'Z') ready = true;
            else if (m.kind() != 'G') client.write(m);   // the client saw its CopyInResponse already
            if (m.kind() == 'E' && failed == null) failed = PgError.parse(m);
        }
        if (commitError != null) client.write(commitError.toMessage());
        if (wrapped && failed == null) client.write(Messages.commandComplete("COMMIT"));
        if (wrapped && failed != null) {
            // PostgreSQL leaves the client's block open and failed: so does its backend here, for the client's ROLLBACK
            block = InteractiveBlock.failed(ctx.engine(), blockSession, database);
            backend.run("BEGIN");
            backend.run(InteractiveBlock.raiseSql(failed));
            client.write(Messages.readyForQuery(backend.status()));
        } else if (ready) client.write(Messages.readyForQuery('I'));
        if (a.catalogChange()) ctx.classifiers().catalogChanged(database);
    }

    /** This session's row in {@link TableSet#SESSION}: its site and backend key (a reused key only serializes more). */
    String orderKey() { return ctx.site() + "/" + (key == null ? 0 : key.pid()); }

    /**
     * A request another site executed never ran on the client's backend: the named statements it
     * parsed or closed must still exist (or not) there for the client's next requests.
     */
    private void keepStatementState(List<WireMessage> unit) throws IOException {
        List<WireMessage> ms = new ArrayList<>();
        for (WireMessage m : unit)
            if ((m.kind() == 'P' && !Messages.parseName(m).isEmpty()) || (m.kind() == 'C' && Messages.closeTarget(m).isStatement())) ms.add(m);
        if (ms.isEmpty()) return;
        for (WireMessage m : ms) backend.send(m);
        backend.send(Messages.SYNC);
        backend.flush();
        while (!backend.tracker().idle()) {
            WireMessage m = backend.read();
            if (m.kind() == 'E') LOG.warn("keeping the client's named statements: {}", PgError.parse(m));
        }
    }

    private static final java.util.Set<String> SESSION_COMMANDS = java.util.Set.of("set", "show", "reset", "discard", "deallocate", "begin",
            "start", "commit", "end", "rollback", "abort", "savepoint", "release");

    /** Whether every statement of the request is a session command (no table read or written), by its leading word. */
    private static boolean sessionCommandsOnly(List<String> texts) {
        for (String t : texts)
            for (String st : UnitClassifier.splitStatements(t)) {
                String w = UnitClassifier.stripComments(st).trim().split("[\\s;(]+", 2)[0].toLowerCase(java.util.Locale.ROOT);
                if (!SESSION_COMMANDS.contains(w)) return false;
            }
        return true;
    }

    /** Whether this site may answer from its replica now (waiting briefly); if not, the request gets 57P03. */
    private boolean servesData(List<WireMessage> unit) throws IOException {
        if (ctx.engine().current() || awaitCurrent()) return true;
        PgError e = notCurrent();
        if (block != null && backend.status() == 'T') block.raise(unit, e);
        else replyError(unit, e);
        return false;
    }

    /** A short wait for the lease (it renews within a heartbeat; a crashed member's view change takes a moment). */
    private boolean awaitCurrent() throws IOException {
        try {
            return ctx.engine().awaitCurrent(CURRENT_WAIT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EOFException("interrupted");
        }
    }

    private static final java.time.Duration CURRENT_WAIT = java.time.Duration.ofSeconds(2);

    private PgError notCurrent() {
        String failure = ctx.engine().failure();
        return PgError.error("57P03", "wanrep: site " + ctx.site() + " cannot be sure its replica is current ("
                        + (failure != null ? "it stopped following the others: " + failure
                        : "it is outside the primary component or has not heard from every site recently") + "); it answers nothing until it is")
                .withHint("Connect to another site, or retry once this site is back in contact with the others.");
    }

    // ------------------------------------------------------------------ interactive blocks

    /**
     * Answers the client's COMMIT with an error without relaying it: the named statements it parses or
     * closes (pgjdbc names its COMMIT after a few uses) must still exist, or not, on the backend.
     */
    void answerUnrelayed(List<WireMessage> unit, PgError e) throws IOException {
        keepStatementState(unit);
        statements.note(unit);
        replyError(unit, e);
    }

    // ------------------------------------------------------------------ our own commands

    /** wanrep's own commands ({@link OwnCommands}), as a simple Query. */
    private boolean answerOwnCommand(String sql) throws IOException {
        OwnCommands.Answer a;
        try {
            a = OwnCommands.answer(sql, ctx, sessionUser);
        } catch (IllegalArgumentException | IllegalStateException e) {   // e.g. a log range this site does not hold
            client.write(OwnCommands.refusal(e).toMessage());
            client.write(Messages.readyForQuery(backend.status()));
            return true;
        }
        if (a == null) return false;
        toClient(OwnCommands.queryReplies(a, backend.status()));
        return true;
    }

    /** The same commands through the extended protocol (as pgjdbc sends them): answered message by message. */
    private boolean answerOwnCommandExtended(List<WireMessage> unit) throws IOException {
        String text = OwnCommands.extendedCommand(unit);
        if (text == null) return false;
        OwnCommands.Answer a;
        try {
            a = OwnCommands.answer(text, ctx, sessionUser);
        } catch (IllegalArgumentException | IllegalStateException e) {   // refused: an error, and the session goes on
            replyError(unit, OwnCommands.refusal(e));
            return true;
        }
        if (a == null) return false;   // not ours after all (e.g. fault injection is off): PostgreSQL answers it
        toClient(OwnCommands.extendedReplies(unit, a, backend.status()));
        return true;
    }

    void toClient(List<WireMessage> messages) throws IOException { for (WireMessage m : messages) client.write(m); }

    // ------------------------------------------------------------------ relaying

    /** Sends a request to the backend and relays every answer to the client (COPY IN data included). */
    private void relay(List<WireMessage> unit) throws IOException { relay(unit, null, null, null); }

    /**
     * Sends a request to the backend and its answers to the client, or into {@code buffer} if given; {@code ours}, if
     * not null, are statements of ours run just before it (one round trip), whose rows go to {@code rows} and whose
     * answers the client never sees. Right after a deferred BEGIN and ahead of a Query they go guarded, as the BEGIN does
     * (no flush of their own; a failure ends the connection, see {@code BackendConnection.deferSetUp}); else as one
     * Query (a failure of it is logged: the request then fails on the failed block, as PostgreSQL answers). Returns
     * what was sent (COPY data included), the first error and the last command tag.
     */
    InteractiveBlock.Relayed relay(List<WireMessage> unit, List<WireMessage> buffer, List<String> ours, java.util.function.Consumer<List<String>> rows)
            throws IOException {
        List<WireMessage> sent = new ArrayList<>();
        PgError error = null;
        String lastTag = null;
        relaying = true;
        try {
            boolean oursGuarded = ours != null && unit.get(0).kind() == 'Q' && backend.beginDeferred();
            if (oursGuarded) backend.deferSetUp(ours, rows);
            else if (ours != null) backend.send(WireMessage.query(String.join("; ", ours)));
            for (WireMessage m : unit) {
                backend.send(m);
                sent.add(m);
            }
            // a request cut short by a Query (no Sync or Flush of its own): PostgreSQL would hold its answers back
            // while we wait for them
            char end = last(unit).kind();
            if (end != 'S' && end != 'H' && end != 'Q') backend.send(Messages.FLUSH);
            backend.flush();
            statements.note(unit);
            if (ours != null && !oursGuarded) {   // its answers come first
                while (true) {
                    WireMessage m = backend.read();
                    if (m.kind() == 'E') LOG.warn("{} failed: {}", String.join("; ", ours), PgError.parse(m));
                    if (m.kind() == 'D' && rows != null) rows.accept(Messages.dataRowValues(m));
                    if (m.kind() == 'Z') break;
                }
            }
            while (!backend.tracker().idle()) {
                if (backend.tracker().awaitingCopyData()) {
                    client.flush();
                    copy.relay(backend, sent);
                    continue;
                }
                WireMessage m = backend.read();
                if (m.kind() == 'E' && error == null) {
                    error = PgError.parse(m);
                    if (block != null) {   // the bound on a certifying block's lock waits is answered as a serialization failure
                        PgError e = block.lockWaitError(error);
                        if (e != error) m = (error = e).toMessage();
                    }
                }
                if (m.kind() == 'C') lastTag = Messages.commandTag(m);
                if (buffer != null) buffer.add(m);
                else client.write(m);
            }
        } finally {
            relaying = false;
        }
        return new InteractiveBlock.Relayed(sent, error, lastTag);
    }

    /** Our own error for a request: ErrorResponse, then ReadyForQuery at its Sync. */
    void replyError(List<WireMessage> unit, PgError e) throws IOException {
        client.write(e.toMessage());
        char k = last(unit).kind();
        if (k == 'S' || k == 'Q') client.write(Messages.readyForQuery(backend.status()));
        else discardUntilSync = true;
    }

    // ------------------------------------------------------------------ statements and settings

    /** After a request: reads the settings again if it may have changed them (see {@link SessionSettings}). */
    private void maybeRefreshSettings(List<String> texts) throws IOException {
        sessionSettings.noteTexts(texts);
        refreshSettings();
    }

    /**
     * The session settings that can change what an update does, shipped with every update so other
     * sites run it the same way; read once the backend is idle (a block's SET LOCAL ends with it).
     */
    private void refreshSettings() throws IOException {
        if (backend.status() != 'I' || backend.tracker().skippingToSync()) return;   // later: it would not answer now
        sessionSettings.refreshIfNeeded(backend);
        if (settingsCopied == sessionSettings.reads() && java.util.Objects.equals(settings.get(TxnRequest.ROLE), role)) return;
        Map<String, String> now = new LinkedHashMap<>(sessionSettings.values());
        if (role != null) now.put(TxnRequest.ROLE, role);   // every site runs this session's updates as its role
        settings = Map.copyOf(now);
        settingsCopied = sessionSettings.reads();
    }

    /** An update this session's state forbids (a read-only default, another role): refused before ordering. */
    private PgError updateRefusal(List<WireMessage> unit) throws IOException {
        refreshSettings();
        return sessionSettings.refusal(statements.texts(unit));
    }

    // ------------------------------------------------------------------ cancel and cleanup

    void cancelRequested() {
        BackendConnection b = backend;
        // a replicated transaction is never cancelled at one site only: that would make replicas differ
        if (b != null && relaying) Thread.ofVirtual().start(b::cancel);
    }

    private void sendFatal(PgError e) { SessionStartup.sendFatal(client, e); }

    private void cleanup() {
        if (block != null) block.abandon();
        ctx.cancels().unregister(key);
        if (backend != null) backend.close();
        client.close();
        startup.release();
        share.settle(0);
    }

    // ------------------------------------------------------------------ what a block sees (BlockSession)

    BackendConnection backend() { return backend; }

    String database() { return database; }

    NamedStatements statements() { return statements; }

    /** Whether a message of {@code kind} is in {@code unit} (a loop: every request asks, most have one message). */
    private static boolean hasKind(List<WireMessage> unit, char kind) {
        for (int i = 0; i < unit.size(); i++) if (unit.get(i).kind() == kind) return true;
        return false;
    }

    private static WireMessage last(List<WireMessage> unit) { return unit.get(unit.size() - 1); }

    static long nowMicros() {
        java.time.Instant i = java.time.Instant.now();
        return i.getEpochSecond() * 1_000_000L + i.getNano() / 1000;
    }
}
