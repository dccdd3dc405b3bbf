package org.wanrep.writeset.capture;

import org.postgresql.PGConnection;
import org.postgresql.PGProperty;
import org.postgresql.replication.LogSequenceNumber;
import org.postgresql.replication.PGReplicationStream;
import org.postgresql.replication.fluent.logical.ChainedLogicalStreamBuilder;
import org.slf4j.Logger;

import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * Reads one logical replication slot and confirms it only past what its capture has handed over.
 * <p>
 * Two threads. The reader owns the replication connection and only reads and gives each message to
 * the capture; it never waits on anyone, because pgjdbc sends the status updates that keep the
 * walsender alive from inside read calls. When the stream fails it reconnects after a delay, and the
 * server resends from the slot's confirmed position (delivery is at-least-once). The hand-over thread
 * runs what the capture gives it ({@link #handOver}); the capture then publishes how far it got
 * ({@link #mayConfirm}) and the reader confirms that to the server.
 */
final class SlotReader {
    private final Logger log;
    private final String what;
    private final String jdbcUrl;
    private final Properties properties;
    private final String slot;
    private final Map<String, String> options;
    private final Duration statusInterval;
    private final Duration reconnectDelay;
    private final Runnable restart;
    private final BiConsumer<ByteBuffer, Supplier<LogSequenceNumber>> messages;

    private final Thread reader;
    private final ExecutorService handover;
    private volatile boolean running = true;
    private volatile boolean connected;
    private final AtomicLong mayConfirm = new AtomicLong(0);
    final AtomicLong reconnects = new AtomicLong();

    private Connection firstConn;
    private PGReplicationStream firstStream;

    /**
     * @param log      the capture's logger, and {@code what} it calls itself in log lines ("capture")
     * @param threads  the threads' name prefix ("wanrep-capture"): {@code <threads>-reader-<slot>}, {@code <threads>-handover-<slot>}
     * @param options  the plugin's stream options, in order
     * @param restart  called on the reader before each stream, first or resent: what was half-read is gone
     * @param messages each message read, with a way to its LSN (asked only where needed)
     */
    SlotReader(Logger log, String what, String threads, String jdbcUrl, Properties properties, String slot,
               Map<String, String> options, Duration statusInterval, Duration reconnectDelay,
               Runnable restart, BiConsumer<ByteBuffer, Supplier<LogSequenceNumber>> messages) {
        this.log = log;
        this.what = what;
        this.jdbcUrl = jdbcUrl;
        this.properties = properties;
        this.slot = slot;
        this.options = options;
        this.statusInterval = statusInterval;
        this.reconnectDelay = reconnectDelay;
        this.restart = restart;
        this.messages = messages;
        this.handover = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, threads + "-handover-" + slot);
            t.setDaemon(true);
            return t;
        });
        this.reader = new Thread(this::readLoop, threads + "-reader-" + slot);
        this.reader.setDaemon(true);
    }

    /**
     * Opens the first stream on the caller's thread, so that a wrong slot or a missing plugin is the
     * caller's error ({@code explain} may reword a failure to start the stream), then starts reading.
     */
    void start(UnaryOperator<SQLException> explain) throws SQLException {
        Connection conn = openReplication();
        PGReplicationStream stream;
        try {
            stream = startStream(conn);
        } catch (SQLException e) {
            conn.close();
            throw explain.apply(e);
        }
        firstConn = conn;   // Thread.start() publishes these to the reader
        firstStream = stream;
        reader.start();
    }

    /** Runs {@code task} on the hand-over thread, after everything given to it before. */
    void handOver(Runnable task) { handover.execute(task); }

    /** Everything up to {@code lsn} is handed over (or not to be): the reader may confirm it to the server. */
    void mayConfirm(String lsn) { mayConfirm.accumulateAndGet(LogSequenceNumber.valueOf(lsn).asLong(), Math::max); }

    /** The LSN last published for confirmation, or null. */
    String publishedLsn() {
        long l = mayConfirm.get();
        return l == 0 ? null : LogSequenceNumber.valueOf(l).asString();
    }

    boolean isConnected() { return connected; }

    /** Stops reading, then lets the hand-over thread finish what it was given. */
    void close() {
        running = false;
        try {
            reader.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        handover.shutdown();
        try {
            handover.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stream options from name, value, name, value...: in order, as the plugin is given them. */
    static Map<String, String> options(String... nameValue) {
        Map<String, String> o = new LinkedHashMap<>();
        for (int k = 0; k < nameValue.length; k += 2) o.put(nameValue[k], nameValue[k + 1]);
        return o;
    }

    // ---------------------------------------------------------------- reader thread

    private Connection openReplication() throws SQLException {
        Properties p = new Properties();
        p.putAll(properties);
        PGProperty.REPLICATION.set(p, "database");
        PGProperty.ASSUME_MIN_SERVER_VERSION.set(p, "10");   // without it pgjdbc never sends replication=database
        PGProperty.PREFER_QUERY_MODE.set(p, "simple");
        return DriverManager.getConnection(jdbcUrl, p);
    }

    private PGReplicationStream startStream(Connection conn) throws SQLException {
        ChainedLogicalStreamBuilder b = conn.unwrap(PGConnection.class).getReplicationAPI().replicationStream().logical()
                .withSlotName(slot);
        options.forEach(b::withSlotOption);
        return b.withStatusInterval((int) Math.max(1, statusInterval.toMillis()), TimeUnit.MILLISECONDS)
                .withAutomaticFlush(false)   // confirm only what was handed over
                .start();
    }

    private void readLoop() {
        Connection conn = firstConn;
        PGReplicationStream stream = firstStream;
        firstConn = null;
        firstStream = null;
        while (running) {
            try {
                if (stream == null) {
                    conn = openReplication();
                    stream = startStream(conn);
                    reconnects.incrementAndGet();
                    log.info("{} {} reconnected", what, slot);
                }
                connected = true;
                restart.run();
                pump(stream);
            } catch (SQLException | RuntimeException e) {
                if (running) log.warn("{} {}: replication stream failed, reconnecting: {}", what, slot, e.toString());
            } finally {
                connected = false;
                closeQuietly(stream, conn);
                stream = null;
                conn = null;
            }
            if (running) LockSupport.parkNanos(reconnectDelay.toNanos());
        }
    }

    private void pump(PGReplicationStream stream) throws SQLException {
        Supplier<LogSequenceNumber> lsn = stream::getLastReceiveLSN;
        long confirmed = 0;
        long idle = 0;
        while (running) {
            ByteBuffer buf = stream.readPending();
            long h = mayConfirm.get();
            if (h > confirmed) {
                LogSequenceNumber l = LogSequenceNumber.valueOf(h);
                stream.setFlushedLSN(l);
                stream.setAppliedLSN(l);
                confirmed = h;
            }
            if (buf == null) {
                // back off from 50 us to 1 ms while idle: low latency after activity, little CPU when quiet
                idle = Math.min(1_000_000, idle == 0 ? 50_000 : idle * 2);
                LockSupport.parkNanos(idle);
                continue;
            }
            idle = 0;
            messages.accept(buf, lsn);
        }
        if (confirmed > 0) stream.forceUpdateStatus();
    }

    private static void closeQuietly(PGReplicationStream stream, Connection conn) {
        try { if (stream != null && !stream.isClosed()) stream.close(); } catch (SQLException | RuntimeException ignored) { }
        try { if (conn != null) conn.close(); } catch (SQLException | RuntimeException ignored) { }
    }

    // ---------------------------------------------------------------- slots

    /**
     * Creates a logical slot for {@code plugin} on the database of {@code c} (a normal connection),
     * two-phase decoding as asked. Returns false if a slot of that name exists already.
     */
    static boolean create(Connection c, String slot, String plugin, boolean twoPhase) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM pg_catalog.pg_replication_slots WHERE slot_name = ?")) {
            ps.setString(1, slot);
            try (ResultSet rs = ps.executeQuery()) { if (rs.next()) return false; }
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_catalog.pg_create_logical_replication_slot(?, ?, false, ?)")) {
            ps.setString(1, slot);
            ps.setString(2, plugin);
            ps.setBoolean(3, twoPhase);
            ps.execute();
            return true;
        }
    }

    /** Drops the slot (its pinned WAL goes with it). Returns false if there was none. */
    static boolean drop(Connection c, String slot) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT pg_catalog.pg_drop_replication_slot(slot_name) FROM pg_catalog.pg_replication_slots WHERE slot_name = ?")) {
            ps.setString(1, slot);
            try (ResultSet rs = ps.executeQuery()) { return rs.next(); }
        }
    }
}
