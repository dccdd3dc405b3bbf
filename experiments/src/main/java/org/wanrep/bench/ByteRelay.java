package org.wanrep.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A relay that copies bytes between a TCP client and PostgreSQL's Unix-domain socket and does
 * nothing else: no parsing, no classification, no replication. It measures the floor any process
 * that sits between client and database pays on this machine (two more reads, two more writes and
 * two more wake-ups per round trip), so that the proxy's overhead can be split into what the
 * interposition costs and what wanrep's own work costs. One thread per direction: an NIO event
 * loop measured no faster here (docs/benchmarks.md).
 */
public final class ByteRelay implements AutoCloseable {
    private final ServerSocketChannel server;
    private final Path socket;
    private final Set<SocketChannel> open = ConcurrentHashMap.newKeySet();

    /** Listens on a free loopback port and relays each connection to {@code socketDir/.s.PGSQL.pgPort}. */
    public ByteRelay(Path socketDir, int pgPort) throws IOException {
        this.socket = socketDir.resolve(".s.PGSQL." + pgPort);
        this.server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress("127.0.0.1", 0), 512);
        Thread.ofPlatform().name("byte-relay-accept").daemon().start(this::accept);
    }

    public int port() { return server.socket().getLocalPort(); }

    private void accept() {
        while (server.isOpen()) {
            try {
                SocketChannel client = server.accept();
                client.socket().setTcpNoDelay(true);
                SocketChannel db = SocketChannel.open(StandardProtocolFamily.UNIX);
                db.connect(UnixDomainSocketAddress.of(socket));
                open.add(client);
                open.add(db);
                Thread.ofPlatform().name("byte-relay").daemon().start(() -> pump(client, db));
                Thread.ofPlatform().name("byte-relay").daemon().start(() -> pump(db, client));
            } catch (IOException e) {
                if (server.isOpen()) throw new IllegalStateException("byte relay: " + e.getMessage(), e);
            }
        }
    }

    /** Copies until either side closes, then closes both. */
    private void pump(SocketChannel from, SocketChannel to) {
        ByteBuffer buf = ByteBuffer.allocateDirect(1 << 16);
        try {
            while (from.read(buf) >= 0) {
                buf.flip();
                while (buf.hasRemaining()) to.write(buf);
                buf.clear();
            }
        } catch (IOException ignored) {
            // the other direction closed the pair
        } finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private void closeQuietly(SocketChannel c) {
        open.remove(c);
        try { c.close(); } catch (IOException ignored) { /* closing */ }
    }

    @Override public void close() throws IOException {
        server.close();
        for (SocketChannel c : open) closeQuietly(c);
    }
}
