package org.wanrep.frontend;

import org.wanrep.auth.ScramServerExchange;
import org.wanrep.auth.UserDirectory;
import org.wanrep.backend.BackendConnection;
import org.wanrep.backend.BackendException;
import org.wanrep.backend.BackendTarget;
import org.wanrep.wire.PayloadReader;
import org.wanrep.wire.PgError;
import org.wanrep.wire.ProtocolException;
import org.wanrep.wire.WireMessage;
import org.wanrep.wire.WireStream;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A client connection's startup, up to the backend it will be relayed to: the startup packet (SSLRequest and
 * the TLS handshake, GSSENCRequest, CancelRequest, the protocol version), the checks PostgreSQL's pg_hba.conf
 * would make (TLS required, the certificate's CN), the places the session holds (sessions of the site, of its
 * user), authentication (trust, md5, SCRAM-SHA-256 from the {@code users} setting) and the backend connection,
 * logged in as the client's role or as the replica user. A refusal is answered with PostgreSQL's FATAL error
 * here; {@link #release} gives back the places taken, whether or not the session got further.
 */
final class SessionStartup {
    private static final SecureRandom RANDOM = new SecureRandom();

    /** What a started session has: its user and database, the role its updates run as (null: the replica user's), its backend. */
    record Opened(String user, String database, String role, BackendConnection backend, SessionSettings settings, long transfersAtOpen) {}

    private final SiteContext ctx;
    private final WireStream client;
    private final SessionSecurity security;
    private boolean encrypted;   // the startup went on inside TLS
    private boolean admitted;    // holds a place of ctx.sessions()
    private String countedUser;  // holds a place among this user's sessions

    SessionStartup(SiteContext ctx, WireStream client, SessionSecurity security) {
        this.ctx = ctx;
        this.client = client;
        this.security = security;
    }

    /**
     * Reads the startup packet, authenticates and opens the backend; null when the connection ends here (a
     * CancelRequest, or a refusal already answered). Sends nothing after authentication: the caller answers
     * AuthenticationOk once it is ready to serve.
     */
    Opened open() throws IOException {
        Map<String, String> params = startupParameters();
        if (params == null) return null;
        String user = params.get("user");
        if (user == null) return refuse(PgError.fatal("28000", "no PostgreSQL user name specified in startup packet"));
        String database = params.getOrDefault("database", user);
        if (security.requireTls() && !encrypted)
            // as a pg_hba.conf with hostssl lines only: the same class and wording as PostgreSQL's refusal
            return refuse(PgError.fatal("28000", "no pg_hba.conf entry for host \"" + client.socket().getInetAddress().getHostAddress()
                    + "\", user \"" + user + "\", database \"" + database + "\", no encryption (wanrep: proxy.tls.require is on; connect with sslmode=require or stronger)"));
        if (security.certificateNamesUser() && encrypted && !user.equals(org.wanrep.tls.TlsContext.peerCommonName(client.tlsSession())))
            return refuse(PgError.fatal("28000", "certificate validation (clientcert=verify-full) failed for user \"" + user + "\": CN mismatch"));
        if (params.containsKey("replication") && !params.get("replication").equals("false"))
            return refuse(PgError.fatal("0A000", "wanrep does not accept replication connections; connect to the replica directly"));
        // as PostgreSQL does, a client past the limit is told so after its startup packet (a cancel still gets through)
        if (!ctx.sessions().tryEnter()) return refuse(PgError.fatal("53300", "sorry, too many clients already"));
        admitted = true;
        if (!authenticate(user)) return null;
        if (!ctx.limits().tryEnterUser(user)) return refuse(PgError.fatal("53300", "too many connections for role \"" + user + "\""));
        countedUser = user;
        // the backend logs in as the client's role, or as the replica user for every client
        BackendTarget as = security.clientRoles() ? ctx.backend().as(user, UserDirectory.replicaPassword(ctx.users().find(user))) : ctx.backend();
        Map<String, String> forward = new LinkedHashMap<>(params);
        forward.remove("user");
        forward.remove("database");
        forward.remove("replication");
        long transfers = ctx.engine().transfers();
        try {
            BackendConnection backend = BackendConnection.open(as, database, forward);
            return new Opened(user, database, security.clientRoles() ? user : null, backend, new SessionSettings(as.user()), transfers);
        } catch (BackendException e) {
            return refuse(e.error());
        }
    }

    /** Gives back the places this session held (its end, or a refusal part-way through the startup). */
    void release() {
        if (admitted) ctx.sessions().leave();
        if (countedUser != null) ctx.limits().leaveUser(countedUser);
        admitted = false;
        countedUser = null;
    }

    /** The StartupMessage's parameters, after any SSLRequest or GSSENCRequest; null if the connection ends here. */
    private Map<String, String> startupParameters() throws IOException {
        while (true) {
            PayloadReader r = new PayloadReader(client.readStartupPacket());
            int code = r.int32();
            if (code == 80877103 && security.tls() != null && !encrypted) {   // SSLRequest: 'S', then the handshake on the same socket
                client.writeRaw('S');
                client.startTls(security.tls()::accept);
                encrypted = true;
                continue;
            }
            if (code == 80877103 && encrypted) return refuse(PgError.fatal("08P01", "SSLRequest inside TLS"));
            if (code == 80877103 || code == 80877104) {   // SSLRequest without TLS configured, GSSENCRequest: not offered
                client.writeRaw('N');
                client.flush();
                continue;
            }
            if (code == 80877102) {   // CancelRequest
                ctx.cancels().cancel(r.int32(), r.int32());
                return null;
            }
            if (code >> 16 != 3)
                return refuse(PgError.fatal("0A000", "unsupported frontend protocol " + (code >> 16) + "." + (code & 0xffff) + ": wanrep speaks 3.0"));
            Map<String, String> params = new LinkedHashMap<>();
            while (r.remaining() > 1) {
                String name = r.cstring();
                if (name.isEmpty()) break;
                params.put(name, r.cstring());
            }
            return params;
        }
    }

    private boolean authenticate(String user) throws IOException {
        UserDirectory.User u = ctx.users().find(user);
        PgError denied = PgError.fatal("28P01", "password authentication failed for user \"" + user + "\"");
        // an unknown name goes through the same exchange and gets the same answer as a wrong password
        if (u == null) u = ctx.users().mock(user);
        switch (u.method()) {
            case TRUST -> { return true; }
            case MD5 -> {
                byte[] salt = new byte[4];
                RANDOM.nextBytes(salt);
                client.write(new org.wanrep.wire.PayloadWriter().int32(5).bytes(salt).message('R'));
                client.flush();
                WireMessage p = client.read();
                String answer = p.kind() == 'p' ? new PayloadReader(p.payload()).cstring() : "";
                if (!answer.equals(md5(u.secret(), user, salt)) | u.mock()) {   // not short-circuited: the same work either way
                    sendFatal(client, denied);
                    return false;
                }
                return true;
            }
            case SCRAM -> {
                ScramServerExchange x = new ScramServerExchange(u.verifier());
                client.write(org.wanrep.wire.Messages.authSasl("SCRAM-SHA-256"));
                client.flush();
                WireMessage first = client.read();
                if (first.kind() != 'p') throw new ProtocolException("expected SASLInitialResponse");
                PayloadReader r = new PayloadReader(first.payload());
                String mech = r.cstring();
                int len = r.int32();
                if (!mech.equals("SCRAM-SHA-256") || len < 0) {
                    sendFatal(client, PgError.fatal("28000", "wanrep offers SCRAM-SHA-256 only, not " + mech));
                    return false;
                }
                try {
                    client.write(org.wanrep.wire.Messages.authSaslContinue(
                            x.serverFirst(new String(r.bytes(len), StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8)));
                } catch (com.ongres.scram.common.exception.ScramParseException e) {
                    sendFatal(client, PgError.fatal("08P01", "malformed SCRAM message: " + e.getMessage()));
                    return false;
                }
                client.flush();
                WireMessage fin = client.read();
                String ok = fin.kind() == 'p' ? x.serverFinal(new String(fin.payload(), StandardCharsets.UTF_8)) : null;
                if (ok == null || u.mock()) {
                    sendFatal(client, denied);
                    return false;
                }
                client.write(org.wanrep.wire.Messages.authSaslFinal(ok.getBytes(StandardCharsets.UTF_8)));
                return true;
            }
        }
        return false;
    }

    private <T> T refuse(PgError e) {
        sendFatal(client, e);
        return null;
    }

    /** A FATAL error to the client, which is gone or about to be closed: a failure to send it is ignored. */
    static void sendFatal(WireStream client, PgError e) {
        try {
            client.write(new PgError("FATAL", e.sqlState(), e.message(), e.detail(), e.hint()).toMessage());
            client.flush();
        } catch (IOException ignored) {
            // the client is gone
        }
    }

    static String md5(String password, String user, byte[] salt) {
        try {
            java.security.MessageDigest md = java.security.MessageDigest.getInstance("MD5");
            String inner = java.util.HexFormat.of().formatHex(md.digest((password + user).getBytes(StandardCharsets.UTF_8)));
            md.reset();
            md.update(inner.getBytes(StandardCharsets.US_ASCII));
            md.update(salt);
            return "md5" + java.util.HexFormat.of().formatHex(md.digest());
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
