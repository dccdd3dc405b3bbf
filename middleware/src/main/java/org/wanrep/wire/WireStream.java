package org.wanrep.wire;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;

/**
 * Blocking, buffered message I/O on one socket. Reads and writes may happen on different threads
 * (a relay reads while another thread writes), but each direction has a single user at a time.
 */
public final class WireStream implements AutoCloseable {
    /** Larger messages are refused: a corrupt length must not allocate gigabytes. */
    public static final int MAX_MESSAGE = 1 << 30;

    private AutoCloseable connection;
    private final Socket socket;   // null over a channel
    // replaced once, by startTls, before any other thread uses the stream
    private DataInputStream in;
    private OutputStream out;

    public WireStream(Socket socket) throws IOException {
        this.connection = socket;
        this.socket = socket;
        socket.setTcpNoDelay(true);
        this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 1 << 16));
        this.out = new BufferedOutputStream(socket.getOutputStream(), 1 << 16);
    }

    /** Over a connected, blocking channel (a Unix-domain socket to PostgreSQL on this host). */
    public WireStream(java.nio.channels.SocketChannel channel) {
        this.connection = channel;
        this.socket = null;
        this.in = new DataInputStream(new BufferedInputStream(java.nio.channels.Channels.newInputStream(channel), 1 << 16));
        this.out = new BufferedOutputStream(java.nio.channels.Channels.newOutputStream(channel), 1 << 16);
    }

    /** Reads one typed message; EOFException when the peer closed. */
    public WireMessage read() throws IOException {
        int type = in.read();
        if (type < 0) throw new EOFException("connection closed by peer");
        int len = in.readInt();
        if (len < 4 || len > MAX_MESSAGE) throw new ProtocolException("invalid message length " + len + " for type '" + (char) type + "'");
        byte[] payload = new byte[len - 4];
        in.readFully(payload);
        return new WireMessage((byte) type, payload);
    }

    /** Reads an untyped startup-phase packet (StartupMessage, SSLRequest, CancelRequest): its body. */
    public byte[] readStartupPacket() throws IOException {
        int len = in.readInt();
        if (len < 8 || len > 10_000) throw new ProtocolException("invalid startup packet length " + len);
        byte[] body = new byte[len - 4];
        in.readFully(body);
        return body;
    }

    /** Whether a read would not block (some bytes are buffered or on the socket). */
    public boolean hasBufferedInput() throws IOException { return in.available() > 0; }

    public void write(WireMessage m) throws IOException {
        int len = m.payload().length + 4;
        out.write(m.type());
        out.write(len >>> 24); out.write(len >>> 16); out.write(len >>> 8); out.write(len);
        out.write(m.payload());
    }

    public void writeAll(Iterable<WireMessage> ms) throws IOException {
        for (WireMessage m : ms) write(m);
    }

    /** Writes an untyped startup packet (length word, then body). */
    public void writeStartupPacket(byte[] body) throws IOException {
        int len = body.length + 4;
        out.write(len >>> 24); out.write(len >>> 16); out.write(len >>> 8); out.write(len);
        out.write(body);
    }

    public void writeRaw(int b) throws IOException { out.write(b); }

    public void flush() throws IOException { out.flush(); }

    public InputStream rawInput() { return in; }

    /** Puts a TLS socket over a connected one and completes its handshake. */
    public interface TlsLayer { Socket over(Socket plain) throws IOException; }

    /** The TLS session, once {@link #startTls} ran; else null. */
    public javax.net.ssl.SSLSession tlsSession() {
        return connection instanceof javax.net.ssl.SSLSocket s ? s.getSession() : null;
    }

    /** The TCP socket under this stream; null over a Unix-domain channel. */
    public Socket socket() { return socket; }

    /**
     * Continues over a TLS socket layered on this one (after an SSLRequest answered 'S'): nothing
     * may have been received unencrypted beyond the request, or it could be taken for data sent
     * inside the TLS session (PostgreSQL refuses that too, CVE-2021-23214).
     */
    public void startTls(TlsLayer layer) throws IOException {
        if (socket == null) throw new IOException("TLS needs a TCP connection");
        if (in.available() > 0) throw new ProtocolException("received unencrypted data after SSL request");
        out.flush();
        Socket tls = layer.over(socket);
        this.connection = tls;
        this.in = new DataInputStream(new BufferedInputStream(tls.getInputStream(), 1 << 16));
        this.out = new BufferedOutputStream(tls.getOutputStream(), 1 << 16);
    }

    @Override public void close() {
        try {
            connection.close();
        } catch (Exception ignored) {
            // closing: nothing to do
        }
    }
}
