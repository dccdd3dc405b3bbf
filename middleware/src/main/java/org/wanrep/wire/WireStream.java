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
    /** PostgreSQL's MAX_STARTUP_PACKET_LENGTH. */
    public static final int MAX_STARTUP_PACKET = 10_000;
    /** The first allocation for a payload; larger ones grow as their bytes arrive. */
    static final int FIRST_STEP = 1 << 16;

    private int maxPayload = MAX_MESSAGE - 4;
    private Budget budget;

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
        if (len < 4) throw new ProtocolException("invalid message length " + len + " for type '" + (char) type + "'");
        int payloadLength = len - 4;
        // checked before anything is allocated: a declared length costs nothing until its bytes arrive
        if (payloadLength > maxPayload) throw new MessageTooLongException((char) type, payloadLength, maxPayload);
        return new WireMessage((byte) type, readPayload((char) type, payloadLength));
    }

    /**
     * The payload, allocated as its bytes arrive (in steps that at most double): a peer that declares
     * a large message and then sends nothing holds one step, not the declared length. Every step is
     * first taken from the budget; if it cannot be, the rest of the message is read and dropped (the
     * stream stays in step) and {@link OverBudgetException} says so.
     */
    private byte[] readPayload(char type, int length) throws IOException {
        int size = Math.min(length, FIRST_STEP);
        if (!take(size)) return skipOverBudget(type, length, 0, 0);
        byte[] payload = new byte[size];
        int have = 0;
        while (true) {
            in.readFully(payload, have, size - have);
            have = size;
            if (have == length) return payload;
            int next = (int) Math.min(length, 2L * size);
            if (!take(next - size)) {
                payload = null;
                return skipOverBudget(type, length, have, size);
            }
            payload = java.util.Arrays.copyOf(payload, next);
            size = next;
        }
    }

    private boolean take(int bytes) { return budget == null || budget.tryTake(bytes); }

    private byte[] skipOverBudget(char type, int length, int have, int taken) throws IOException {
        if (budget != null) budget.give(taken);
        skipFully(length - have);
        throw new OverBudgetException(type, length);
    }

    private void skipFully(long n) throws IOException {
        byte[] sink = new byte[(int) Math.min(n, 8192)];
        while (n > 0) {
            int k = in.read(sink, 0, (int) Math.min(n, sink.length));
            if (k < 0) throw new EOFException("connection closed by peer");
            n -= k;
        }
    }

    /** Reads an untyped startup-phase packet (StartupMessage, SSLRequest, CancelRequest): its body. */
    public byte[] readStartupPacket() throws IOException {
        int len = in.readInt();
        // PostgreSQL's own limit (MAX_STARTUP_PACKET_LENGTH) and message
        if (len < 8 || len > MAX_STARTUP_PACKET) throw new ProtocolException("invalid length of startup packet");
        byte[] body = new byte[len - 4];
        in.readFully(body);
        return body;
    }

    /**
     * The largest payload {@link #read()} accepts from now on (a peer's declared length above it is refused
     * before anything is allocated), and the budget its bytes are taken from (null: none). The caller gives
     * the bytes back to the budget when it lets go of the messages.
     */
    public void limit(int maxPayload, Budget budget) {
        this.maxPayload = maxPayload;
        this.budget = budget;
    }

    /** How long a read may wait for bytes, in ms (0: for ever); only over a socket. */
    public void readTimeout(int ms) throws IOException {
        if (connection instanceof Socket s) s.setSoTimeout(ms);
    }

    /** Bytes that buffered messages may hold, shared by the readers of one site. */
    public interface Budget {
        boolean tryTake(int bytes);

        void give(long bytes);
    }

    /** A message longer than the reader accepts: the stream cannot be resynchronised, the connection ends. */
    public static final class MessageTooLongException extends ProtocolException {
        public final int length;
        public final int max;

        MessageTooLongException(char type, int length, int max) {
            super("message of type '" + type + "' declares " + length + " bytes, more than the " + max + " accepted");
            this.length = length;
            this.max = max;
        }
    }

    /** A message the budget had no room for: read and dropped, the stream is still in step. */
    public static final class OverBudgetException extends IOException {
        public final char type;

        OverBudgetException(char type, int length) {
            super("no memory left in the budget for a message of " + length + " bytes");
            this.type = type;
        }
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
