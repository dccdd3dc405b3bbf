package org.wanrep.backend;

import com.ongres.scram.client.ScramClient;
import com.ongres.scram.common.exception.ScramException;
import org.wanrep.wire.Messages;
import org.wanrep.wire.PayloadReader;
import org.wanrep.wire.PayloadWriter;
import org.wanrep.wire.PgError;
import org.wanrep.wire.ResponseTracker;
import org.wanrep.wire.WireMessage;
import org.wanrep.wire.WireStream;
import org.wanrep.tls.TlsContext;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One protocol-v3 connection from the proxy to its PostgreSQL replica, speaking the wire protocol
 * directly (not JDBC) so that client messages can be forwarded and replayed byte for byte.
 * Authenticates with trust, password, md5 or SCRAM-SHA-256.
 */
public final class BackendConnection implements AutoCloseable {
    private final WireStream io;
    private final BackendTarget target;
    private final String database;
    private final Map<String, String> parameters = new LinkedHashMap<>();
    private final ResponseTracker tracker = new ResponseTracker();
    private int pid, secretKey;
    private volatile boolean broken;
    /** When it was opened (System.nanoTime): one opened before a state transfer replaced the databases is dead. */
    private final long openedAt = System.nanoTime();

    /** When this connection was opened, as System.nanoTime. */
    public long openedAt() { return openedAt; }

    /**
     * What this session's settings are after RESET ALL (pg_settings name -> setting), once someone read them
     * (see {@code exec.SessionDefaults}); null until then. They depend only on how the session logged in
     * (role, database, startup parameters, the server's configuration), so they hold for its whole life.
     */
    private volatile Map<String, String> resetValues;

    public Map<String, String> resetValues() { return resetValues; }

    public void resetValues(Map<String, String> values) { this.resetValues = values; }

    private BackendConnection(WireStream io, BackendTarget target, String database) {
        this.io = io;
        this.target = target;
        this.database = database;
    }

    /**
     * Connects and authenticates. {@code startupParams} are sent in the StartupMessage besides user and
     * database (e.g. the client's application_name, DateStyle, TimeZone).
     */
    public static BackendConnection open(BackendTarget t, String database, Map<String, String> startupParams) throws IOException {
        BackendConnection c = new BackendConnection(connect(t, 10_000), t, database);
        try {
            c.startup(startupParams);
        } catch (IOException | RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    /** A connection to the replica: its Unix-domain socket if configured, else TCP. */
    private static WireStream connect(BackendTarget t, int timeoutMs) throws IOException {
        if (t.socketFile() != null) {
            java.nio.channels.SocketChannel ch = java.nio.channels.SocketChannel.open(java.net.StandardProtocolFamily.UNIX);
            try {
                ch.connect(java.net.UnixDomainSocketAddress.of(t.socketFile()));
            } catch (IOException e) {
                ch.close();
                throw new BackendException("cannot reach PostgreSQL at " + t.socketFile() + ": " + e.getMessage(), e);
            }
            return new WireStream(ch);
        }
        Socket s = new Socket();
        try {
            s.connect(new InetSocketAddress(t.host(), t.port()), timeoutMs);
        } catch (IOException e) {
            s.close();
            throw new BackendException("cannot reach PostgreSQL at " + t.host() + ":" + t.port() + ": " + e.getMessage(), e);
        }
        WireStream w = new WireStream(s);
        if (t.sslmode().equals("disable")) return w;
        // libpq's negotiation: SSLRequest, 'S', then the handshake on the same socket
        try {
            w.writeStartupPacket(new PayloadWriter().int32(80877103).bytes());
            w.flush();
            int answer = w.rawInput().read();
            if (answer != 'S') throw new BackendException("PostgreSQL at " + t.host() + ":" + t.port() + " does not offer TLS (postgres.sslmode " + t.sslmode() + ")", null);
            TlsContext tls = tls(t);
            w.startTls(plain -> tls.connect(plain, t.host()));
            return w;
        } catch (IOException e) {
            w.close();
            if (e instanceof BackendException) throw e;
            throw new BackendException("TLS to PostgreSQL at " + t.host() + ":" + t.port() + " failed: " + e.getMessage(), e);
        }
    }

    private static final java.util.Map<String, TlsContext> CONTEXTS = new java.util.concurrent.ConcurrentHashMap<>();

    /** The client TLS context for a target's sslmode and root certificate (read once). */
    public static TlsContext tls(BackendTarget t) throws BackendException {
        String key = t.sslmode() + "\0" + t.sslrootcert();
        TlsContext c = CONTEXTS.get(key);
        if (c != null) return c;
        try {
            c = TlsContext.client(t.sslmode(), t.sslrootcert() == null ? null : java.nio.file.Path.of(t.sslrootcert()));
        } catch (IOException | java.security.GeneralSecurityException e) {
            throw new BackendException("TLS to PostgreSQL: " + e.getMessage(), e);
        }
        CONTEXTS.put(key, c);
        return c;
    }

    private void startup(Map<String, String> extra) throws IOException {
        PayloadWriter w = new PayloadWriter().int32(196608).cstring("user").cstring(target.user()).cstring("database").cstring(database);
        for (Map.Entry<String, String> e : extra.entrySet()) {
            if (e.getKey().equals("user") || e.getKey().equals("database")) continue;
            w.cstring(e.getKey()).cstring(e.getValue());
        }
        w.int8(0);
        io.writeStartupPacket(w.bytes());
        io.flush();
        ScramClient scram = null;
        while (true) {
            WireMessage m = io.read();
            switch (m.kind()) {
                case 'R' -> {
                    PayloadReader r = new PayloadReader(m.payload());
                    int code = r.int32();
                    switch (code) {
                        case 0 -> { }
                        case 3 -> sendPassword(requirePassword());
                        case 5 -> sendPassword(md5(requirePassword(), target.user(), r.bytes(4)));
                        case 10 -> {
                            List<String> mechs = new ArrayList<>();
                            for (String mech = r.cstring(); !mech.isEmpty(); mech = r.cstring()) mechs.add(mech);
                            scram = ScramClient.builder().advertisedMechanisms(mechs).username("*")
                                    .password(requirePassword().toCharArray()).build();
                            byte[] first = scram.clientFirstMessage().toString().getBytes(StandardCharsets.UTF_8);
                            io.write(new PayloadWriter().cstring(scram.getScramMechanism().getName()).int32(first.length).bytes(first).message('p'));
                            io.flush();
                        }
                        case 11 -> {
                            try {
                                scram.serverFirstMessage(new String(r.rest(), StandardCharsets.UTF_8));
                            } catch (ScramException e) {
                                throw new BackendException("SCRAM exchange with PostgreSQL failed: " + e.getMessage(), e);
                            }
                            io.write(WireMessage.of('p', scram.clientFinalMessage().toString().getBytes(StandardCharsets.UTF_8)));
                            io.flush();
                        }
                        case 12 -> {
                            try {
                                scram.serverFinalMessage(new String(r.rest(), StandardCharsets.UTF_8));
                            } catch (ScramException e) {
                                throw new BackendException("PostgreSQL's SCRAM signature is invalid: " + e.getMessage(), e);
                            }
                        }
                        default -> throw new BackendException(PgError.fatal("28000", "wanrep cannot use PostgreSQL authentication method " + code));
                    }
                }
                case 'S' -> {
                    PayloadReader r = new PayloadReader(m.payload());
                    parameters.put(r.cstring(), r.cstring());
                }
                case 'K' -> {
                    PayloadReader r = new PayloadReader(m.payload());
                    pid = r.int32();
                    secretKey = r.int32();
                }
                case 'E' -> throw new BackendException(PgError.parse(m));
                case 'Z' -> { return; }
                default -> { }   // notices
            }
        }
    }

    private String requirePassword() throws BackendException {
        if (target.password() == null || target.password().isEmpty())
            throw new BackendException(PgError.fatal("28P01", "PostgreSQL asks wanrep for a password, but none is configured (backend.password)"));
        return target.password();
    }

    private void sendPassword(String p) throws IOException {
        io.write(new PayloadWriter().cstring(p).message('p'));
        io.flush();
    }

    static String md5(String password, String user, byte[] salt) {
        try {
            MessageDigest md = MessageDigest.getInstance("MD5");
            String inner = HexFormat.of().formatHex(md.digest((password + user).getBytes(StandardCharsets.UTF_8)));
            md.reset();
            md.update(inner.getBytes(StandardCharsets.US_ASCII));
            md.update(salt);
            return "md5" + HexFormat.of().formatHex(md.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    public Map<String, String> parameters() { return parameters; }
    public int pid() { return pid; }
    public int secretKey() { return secretKey; }
    public BackendTarget target() { return target; }
    public String database() { return database; }

    /** The role this connection logged in as. */
    public String user() { return target.user(); }
    public ResponseTracker tracker() { return tracker; }
    public boolean isBroken() { return broken; }

    // ------------------------------------------------------------------ a deferred BEGIN

    /** A BEGIN answered to the client but not sent yet: {@link #status} says 'T' until something is sent. */
    private boolean beginDeferred;
    /** Guarded statements (BEGIN, then any set-up) whose CommandComplete has not come: {@link #read} drops their answers. */
    private int guardedLeft;
    /** From the guarded BEGIN's sending to the next ReadyForQuery, the first to tell the status. */
    private boolean beginUnconfirmed;

    /** The deferred BEGIN's text: "BEGIN" (tests give one PostgreSQL refuses, to see the refusal handled). */
    private String beginSql;
    /** Statements of ours to run right after the deferred BEGIN (see {@link #deferSetUp}), and who takes their rows. */
    private List<String> setUp = List.of();
    private java.util.function.Consumer<List<String>> setUpRows;

    /** The three messages of a guarded statement (unnamed statement and portal; no Sync). */
    private static List<WireMessage> guarded(String sql) {
        return List.of(new PayloadWriter().cstring("").cstring(sql).int16(0).message('P'),
                new PayloadWriter().cstring("").cstring("").int16(0).int16(0).int16(0).message('B'),
                new PayloadWriter().cstring("").int32(0).message('E'));
    }

    /**
     * Opens a transaction block without a round trip of its own: BEGIN goes to PostgreSQL with the next request,
     * and until then {@link #status} is 'T', as if it had run. It goes as Parse/Bind/Execute with no Sync ahead of a
     * request that starts with a Query: if PostgreSQL refused it (a cancel or statement_timeout that hit it), it skips
     * everything up to a Sync, so nothing of the request runs outside the block; the refusal ends the connection
     * ({@link BackendException}). The Query drops the unnamed statement and portal, as the client's simple-query BEGIN
     * did, so the client's view of them is PostgreSQL's. Ahead of anything else, BEGIN runs as its own round trip.
     * Only on an idle connection with nothing in flight.
     */
    public void deferBegin() { deferBegin("BEGIN"); }

    /** {@link #deferBegin()} with another text for BEGIN (tests: one PostgreSQL refuses). */
    void deferBegin(String sql) {
        if (beginDeferred || status() != 'I' || !tracker.idle())
            throw new IllegalStateException("a deferred BEGIN needs an idle connection (status " + status() + ")");
        beginDeferred = true;
        beginSql = sql;
        setUp = List.of();
        setUpRows = null;
    }

    /** Whether a BEGIN is deferred and nothing has been sent since. */
    public boolean beginDeferred() { return beginDeferred; }

    /**
     * Statements of ours (one each, no semicolon between two) that go right after the deferred BEGIN, guarded as it is,
     * ahead of the next request if it starts with a Query: no round trip and no flush of their own, and PostgreSQL
     * answers them with the request (their rows go to {@code rows}, the rest of their answers nobody sees). If one fails,
     * nothing of the request runs and the connection ends, as for a refused BEGIN. Call only before {@link #send}, and
     * only for a request that starts with a Query (ahead of anything else they would use the client's unnamed statement).
     */
    public void deferSetUp(List<String> statements, java.util.function.Consumer<List<String>> rows) {
        if (!beginDeferred) throw new IllegalStateException("a set-up goes with a deferred BEGIN");
        setUp = List.copyOf(statements);
        setUpRows = rows;
    }

    /** Sends the deferred BEGIN (and set-up) ahead of {@code first}, the next message to go. */
    private void sendDeferredBegin(WireMessage first) throws IOException {
        beginDeferred = false;
        if (first.kind() != 'Q') {
            if (!setUp.isEmpty()) throw new IllegalStateException("a deferred set-up goes only ahead of a Query");
            PgError e = run(beginSql);
            if (e != null || tracker.lastStatus() != 'T') throw beginRefused(e, "begin");
            return;
        }
        List<String> statements = new ArrayList<>(1 + setUp.size());
        statements.add(beginSql);
        statements.addAll(setUp);
        for (String sql : statements) {
            for (WireMessage m : guarded(sql)) {
                tracker.sent(m);
                io.write(m);
            }
        }
        guardedLeft = statements.size();
        beginUnconfirmed = true;
    }

    /**
     * PostgreSQL refused a guarded statement (its error just read): it skips up to a Sync, so the request sent after
     * it did not run. Reads up to that Sync's ReadyForQuery (sending one if the request had none) and returns the
     * error that ends the connection: the client believes a block is open that is not (or not set up).
     */
    private BackendException guardedFailed(PgError e) throws IOException {
        String what = guardedLeft > setUp.size() ? "begin" : "set up";
        guardedLeft = 0;
        if (tracker.skippingToSync()) {
            tracker.sent(Messages.SYNC);
            io.write(Messages.SYNC);
            io.flush();
        }
        while (!tracker.idle()) tracker.received(io.read());
        beginUnconfirmed = false;
        return beginRefused(e, what);
    }

    private BackendException beginRefused(PgError e, String what) {
        broken = true;
        return new BackendException(PgError.fatal(e == null ? "XX000" : e.sqlState(), "wanrep: PostgreSQL did not " + what + " the transaction block"
                + (e == null ? " (status " + tracker.lastStatus() + ")" : ": " + e.message()) + "; nothing of the request after BEGIN ran"));
    }

    // ------------------------------------------------------------------ messages

    /** Queues a message (call {@link #flush}); tracks what answers it needs. */
    public void send(WireMessage m) throws IOException {
        try {
            if (beginDeferred) sendDeferredBegin(m);
            tracker.sent(m);
            io.write(m);
        } catch (IOException e) {
            broken = true;
            throw e;
        }
    }

    public void flush() throws IOException {
        try {
            io.flush();
        } catch (IOException e) {
            broken = true;
            throw e;
        }
    }

    /** Reads the next backend message (blocking). */
    public WireMessage read() throws IOException {
        if (beginDeferred) throw new IllegalStateException("read from PostgreSQL with nothing sent (a BEGIN is deferred)");
        try {
            while (true) {
                WireMessage m = io.read();
                tracker.received(m);
                if (m.kind() == 'S') {
                    PayloadReader r = new PayloadReader(m.payload());
                    parameters.put(r.cstring(), r.cstring());
                }
                if (guardedLeft > 0) {   // the guarded statements' answers come first, and are ours
                    switch (m.kind()) {
                        case '1', '2' -> { continue; }
                        case 'D' -> {
                            if (setUpRows != null) setUpRows.accept(Messages.dataRowValues(m));
                            continue;
                        }
                        case 'C' -> {
                            if (--guardedLeft == 0) {
                                setUp = List.of();
                                setUpRows = null;
                            }
                            continue;
                        }
                        case 'E' -> throw guardedFailed(PgError.parse(m));
                        default -> { }   // a notice or parameter status: the caller's, as without the BEGIN
                    }
                }
                if (m.kind() == 'Z') beginUnconfirmed = false;
                return m;
            }
        } catch (IOException | RuntimeException e) {
            broken = true;
            throw e;
        }
    }

    /**
     * Runs one simple query of the proxy's own (BEGIN, COMMIT, setseed...) and returns its error, or
     * null. Its replies never reach a client.
     */
    public PgError run(String sql) throws IOException {
        send(WireMessage.query(sql));
        flush();
        PgError err = null;
        while (true) {
            WireMessage m = read();
            if (m.kind() == 'E' && err == null) err = PgError.parse(m);
            if (m.kind() == 'Z') return err;
        }
    }

    /** Like {@link #run}, handing every data row to {@code rows}. */
    public PgError runCollecting(String sql, java.util.function.Consumer<List<String>> rows) throws IOException {
        send(WireMessage.query(sql));
        flush();
        PgError err = null;
        while (!tracker().idle()) {
            WireMessage m = read();
            if (m.kind() == 'E' && err == null) err = PgError.parse(m);
            if (m.kind() == 'D') rows.accept(org.wanrep.wire.Messages.dataRowValues(m));
        }
        return err;
    }

    /** What one query of {@link #runEach} did: its CommandComplete tags and its first error (null if none). */
    public record Ran(List<String> tags, PgError error) {}

    /** Runs several simple queries of the proxy's own in one round trip (pipelined); each one's tags and error, in order. */
    public List<Ran> runEach(List<String> queries) throws IOException {
        for (String q : queries) send(WireMessage.query(q));
        flush();
        List<Ran> out = new ArrayList<>();
        List<String> tags = new ArrayList<>();
        PgError err = null;
        while (out.size() < queries.size()) {
            WireMessage m = read();
            if (m.kind() == 'C') tags.add(Messages.commandTag(m));
            if (m.kind() == 'E' && err == null) err = PgError.parse(m);
            if (m.kind() == 'Z') {
                out.add(new Ran(List.copyOf(tags), err));
                tags.clear();
                err = null;
            }
        }
        return out;
    }

    /** Like {@link #run} but also returns the CommandComplete tags. */
    public List<String> runForTags(String sql) throws IOException {
        send(WireMessage.query(sql));
        flush();
        List<String> tags = new ArrayList<>();
        PgError err = null;
        while (true) {
            WireMessage m = read();
            if (m.kind() == 'C') tags.add(Messages.commandTag(m));
            if (m.kind() == 'E' && err == null) err = PgError.parse(m);
            if (m.kind() == 'Z') {
                if (err != null) throw new BackendException(err);
                return tags;
            }
        }
    }

    /** Sends a CancelRequest for this backend on a new connection (what a client's cancel maps to). */
    public void cancel() {
        try (WireStream w = connect(target, 5_000)) {
            w.writeStartupPacket(new PayloadWriter().int32(80877102).int32(pid).int32(secretKey).bytes());
            w.flush();
            w.rawInput().read();   // the server closes the connection when done
        } catch (IOException ignored) {
            // best effort, as in PostgreSQL
        }
    }

    /** The status of the last ReadyForQuery: I, T or E. */
    public char status() { return beginDeferred || beginUnconfirmed ? 'T' : tracker.lastStatus(); }

    @Override public void close() {
        try {
            if (!broken) {
                io.write(Messages.TERMINATE);
                io.flush();
            }
        } catch (IOException ignored) {
            // closing anyway
        }
        io.close();
    }
}
