package org.wanrep.frontend;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.wanrep.wire.WireStream;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** Accepts PostgreSQL clients on the proxy port; one virtual thread per client session. */
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

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                clients.add(s);
                Thread.ofPlatform().name("wanrep-client").daemon().start(() -> {
                    try {
                        new ClientSession(ctx, new WireStream(s), security).run();
                    } catch (IOException e) {
                        LOG.debug("client setup: {}", e.toString());
                    } finally {
                        clients.remove(s);
                        try { s.close(); } catch (IOException ignored) { /* closing */ }
                    }
                });
            } catch (IOException e) {
                if (!server.isClosed()) LOG.warn("accept: {}", e.toString());
            }
        }
    }

    /** Stops accepting and drops every client connection. */
    @Override public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // closing
        }
        for (Socket s : clients) {
            try { s.close(); } catch (IOException ignored) { /* closing */ }
        }
    }
}
