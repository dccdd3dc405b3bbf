package org.wanrep.frontend;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.wanrep.wire.PgError;
import org.wanrep.wire.WireStream;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Accepts PostgreSQL clients on the proxy port; one platform thread per client session. A failure
 * to serve one connection drops that client only; if the accept thread itself ends, the site stops.
 */
public final class ProxyServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ProxyServer.class);

    private final ServerSocket server;
    private final SiteContext ctx;
    private final Set<Socket> clients = ConcurrentHashMap.newKeySet();
    private final Thread acceptor;
    private final SessionSecurity security;

    public ProxyServer(SiteContext ctx, String host, int port) throws IOException { this(ctx, bind(host, port)); }

    /**
     * The proxy's port, bound (clients that connect wait in the backlog until the proxy accepts). A site
     * binds it first thing, so that nothing else takes the port while the site joins the group.
     */
    public static ServerSocket bind(String host, int port) throws IOException {
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(host, port), 512);
        return s;
    }

    /** Starts accepting on {@code bound} (see {@link #bind}). */
    public ProxyServer(SiteContext ctx, ServerSocket bound) { this(ctx, bound, SessionSecurity.NONE); }

    /** As {@link #ProxyServer(SiteContext, ServerSocket)}, with TLS and roles as {@code security} says. */
    public ProxyServer(SiteContext ctx, ServerSocket bound, SessionSecurity security) {
        this.ctx = ctx;
        this.security = security;
        this.server = bound;
        this.acceptor = Thread.ofPlatform().name("wanrep-accept-" + ctx.site()).daemon().start(this::acceptLoop);
    }

    public int port() { return server.getLocalPort(); }

    /** What clients may cost this site, and what their buffered messages hold now. */
    public ClientLimits limits() { return ctx.limits(); }

    /** Whether the accept thread still runs. */
    public boolean accepting() { return acceptor.isAlive(); }

    /**
     * Called with a reason if the accept thread ends while the server is open: the site then stops
     * (fail-stop) rather than live on accepting nothing.
     */
    public void onFatal(java.util.function.Consumer<String> handler) {
        this.fatal = handler;
        if (acceptorDied != null) handler.accept(acceptorDied);
    }

    private volatile java.util.function.Consumer<String> fatal;
    private volatile String acceptorDied;

    private void acceptLoop() {
        Throwable died = null;
        try {
            while (!server.isClosed()) {
                Socket s;
                try {
                    s = server.accept();
                } catch (IOException e) {
                    if (server.isClosed()) break;
                    LOG.warn("accept: {}", e.toString());
                    pause();   // e.g. out of file descriptors: do not spin
                    continue;
                }
                try {
                    serve(s);
                } catch (Exception | VirtualMachineError e) {
                    // one connection's failure (no memory or no thread for it): that client is dropped, the others are served
                    LOG.error("could not serve a client connection: {}", e.toString());
                    pause();
                }
            }
        } catch (Throwable t) {
            died = t;
        } finally {
            if (!server.isClosed()) {
                String reason = "the proxy stopped accepting clients: " + (died == null ? "accept loop ended" : died.toString());
                LOG.error(reason, died);
                acceptorDied = reason;
                java.util.function.Consumer<String> f = fatal;
                if (f != null) f.accept(reason);
            }
        }
    }

    /** Tests: runs before each connection is served (to make serving it fail). */
    volatile java.util.function.Consumer<Socket> beforeServe = s -> { };

    private void serve(Socket s) {
        try {
            serveOrFail(s);
        } catch (Throwable t) {   // not served: the client must not wait for an answer that never comes
            clients.remove(s);
            closeQuietly(s);
            throw t;
        }
    }

    private void serveOrFail(Socket s) {
        clients.add(s);
        beforeServe.accept(s);
        if (!ctx.limits().tryStart()) {
            // as PostgreSQL's postmaster does when too many connections are starting: answered at once, no thread
            try {
                s.setSoTimeout(1000);
                WireStream w = new WireStream(s);
                w.write(PgError.fatal("53300", "sorry, too many clients already").toMessage());
                w.flush();
            } catch (IOException ignored) {
                // the client is gone
            } finally {
                clients.remove(s);
                closeQuietly(s);
            }
            return;
        }
        try {
            Thread.ofPlatform().name("wanrep-client").daemon().start(() -> {
                try {
                    new ClientSession(ctx, new WireStream(s), security).run();
                } catch (IOException e) {
                    LOG.debug("client setup: {}", e.toString());
                    ctx.limits().started();
                } catch (Throwable t) {   // whatever the session did not handle ends it only
                    LOG.error("client session failed", t);
                } finally {
                    clients.remove(s);
                    closeQuietly(s);
                }
            });
        } catch (Throwable t) {
            ctx.limits().started();
            throw t;
        }
    }

    private static void pause() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(Socket s) {
        try { s.close(); } catch (IOException ignored) { /* closing */ }
    }

    /** Stops accepting and drops every client connection. */
    @Override public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // closing
        }
        for (Socket s : clients) closeQuietly(s);
        ctx.limits().close();
    }
}
