package org.wanrep.txn;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The latest {@code window} ordered requests this site delivered, as delivered (GSN, sending member,
 * payload), with the primary views installed between them, so that a site that rejoins can fetch what
 * it missed and replay it under the same rules ({@link ReplicationEngine}). Kept in memory and appended
 * to a file, fsynced in batches: the log only serves other sites, so a tail lost in a crash merely
 * shortens what this site can serve. GSNs in the log are contiguous; a gap (this site itself rejoined
 * further ahead) starts it afresh.
 */
public final class OrderedLog implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(OrderedLog.class);

    /**
     * An ordered request ({@code members == null}: GSN, sending member and its message number, payload), or a primary view installed
     * after GSN {@code gsn} was delivered ({@code members}).
     */
    public record Entry(long gsn, String sender, long seq, byte[] payload, List<String> members) {
        public boolean isView() { return members != null; }
    }

    private final int window;
    private final Path file;
    private final ArrayDeque<Entry> entries = new ArrayDeque<>();
    private int ordered;           // ordered entries in memory
    private long appendedSinceRewrite;
    private DataOutputStream out;
    private FileChannel channel;
    private boolean dirty;
    private final Thread syncer;
    private volatile boolean closed;

    /** A log kept in memory only (tests, or no directory). */
    public static OrderedLog inMemory(int window) {
        return new OrderedLog(window, null);
    }

    /** Opens (or creates) the log file and loads its latest {@code window} requests. */
    public static OrderedLog open(Path file, int window) throws IOException {
        return new OrderedLog(window, file);
    }

    private OrderedLog(int window, Path file) {
        this.window = Math.max(1, window);
        this.file = file;
        if (file != null) {
            try {
                Files.createDirectories(file.toAbsolutePath().getParent());
                if (Files.exists(file)) load();
                openForAppend(false);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException("cannot open the ordered-request log " + file, e);
            }
            syncer = Thread.ofPlatform().daemon().name("wanrep-log-sync").start(this::syncLoop);
        } else syncer = null;
    }

    private void load() throws IOException {
        try (DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(Files.newInputStream(file)))) {
            while (true) {
                Entry e;
                try {
                    e = read(in);
                } catch (EOFException | RuntimeException end) {
                    break;   // a torn tail from a crash: what came before is intact
                }
                add(e);
            }
        }
        LOG.info("ordered-request log {}: {} requests loaded{}", file, ordered, ordered == 0 ? "" : ", GSN " + first() + " to " + last());
    }

    private static Entry read(DataInputStream in) throws IOException {
        int kind = in.readByte();
        long gsn = in.readLong();
        if (kind == 'o') {
            String sender = in.readUTF();
            long seq = in.readLong();
            byte[] p = new byte[in.readInt()];
            in.readFully(p);
            return new Entry(gsn, sender, seq, p, null);
        }
        if (kind != 'v') throw new IllegalStateException("bad log entry kind " + kind);
        int n = in.readInt();
        List<String> ms = new ArrayList<>(n);
        for (int i = 0; i < n; i++) ms.add(in.readUTF());
        return new Entry(gsn, null, 0, null, List.copyOf(ms));
    }

    private static void write(DataOutputStream o, Entry e) throws IOException {
        o.writeByte(e.isView() ? 'v' : 'o');
        o.writeLong(e.gsn());
        if (!e.isView()) {
            o.writeUTF(e.sender());
            o.writeLong(e.seq());
            o.writeInt(e.payload().length);
            o.write(e.payload());
        } else {
            o.writeInt(e.members().size());
            for (String m : e.members()) o.writeUTF(m);
        }
    }

    private void openForAppend(boolean truncate) throws IOException {
        channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                truncate ? StandardOpenOption.TRUNCATE_EXISTING : StandardOpenOption.APPEND);
        if (!truncate) channel.position(channel.size());
        out = new DataOutputStream(new BufferedOutputStream(java.nio.channels.Channels.newOutputStream(channel), 1 << 16));
    }

    /** Records the ordered delivery {@code gsn} (ignored if already there). */
    public synchronized void ordered(long gsn, org.wanrep.gcs.MsgId id, byte[] payload) {
        long last = last();
        if (ordered > 0 && gsn <= last) return;   // replayed while catching up, already logged
        if (ordered > 0 && gsn != last + 1) {
            LOG.info("ordered-request log: GSN {} after {}: starting afresh", gsn, last);
            entries.clear();
            ordered = 0;
        }
        append(new Entry(gsn, id.sender(), id.seq(), payload, null));
    }

    /** Forgets everything (the group started a new history: GSNs count from 1 again). */
    public synchronized void clear() {
        entries.clear();
        ordered = 0;
        if (out != null) {
            try {
                closeFile();
                openForAppend(true);
            } catch (IOException e) {
                LOG.warn("ordered-request log {}: cannot truncate ({}); kept in memory only", file, e.toString());
                closeFile();
            }
        }
    }

    /** Records a primary view installed after GSN {@code afterGsn}. */
    public synchronized void view(long afterGsn, List<String> members) {
        if (ordered > 0 && afterGsn < last()) return;
        append(new Entry(afterGsn, null, 0, null, List.copyOf(members)));
    }

    private void append(Entry e) {
        add(e);
        notifyAll();
        if (out == null) return;
        try {
            write(out, e);
            dirty = true;
            if (++appendedSinceRewrite > 2L * window) rewrite();
        } catch (IOException x) {
            LOG.warn("ordered-request log {}: write failed ({}); kept in memory only", file, x.toString());
            closeFile();
        }
    }

    private void add(Entry e) {
        entries.addLast(e);
        if (!e.isView()) ordered++;
        while (ordered > window) {
            Entry gone = entries.removeFirst();
            if (!gone.isView()) ordered--;
        }
        while (!entries.isEmpty() && entries.peekFirst().isView() && ordered > 0 && entries.peekFirst().gsn() < first() - 1) entries.removeFirst();
    }

    /** The file holds only the window: rewritten from memory (then renamed over the old one). */
    private void rewrite() throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (DataOutputStream o = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(tmp)))) {
            for (Entry e : entries) write(o, e);
        }
        closeFile();
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        openForAppend(false);
        appendedSinceRewrite = 0;
    }

    private void syncLoop() {
        while (!closed) {
            try {
                Thread.sleep(200);
                sync();
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private synchronized void sync() {
        if (!dirty || out == null) return;
        try {
            out.flush();
            channel.force(false);
            dirty = false;
        } catch (IOException e) {
            LOG.warn("ordered-request log {}: sync failed ({}); kept in memory only", file, e.toString());
            closeFile();
        }
    }

    private void closeFile() {
        try {
            if (out != null) out.close();
        } catch (IOException ignored) {
            // closing
        }
        out = null;
        channel = null;
    }

    /** The first GSN held, or 0 if none. */
    public synchronized long first() {
        for (Entry e : entries) if (!e.isView()) return e.gsn();
        return 0;
    }

    /** The last GSN held, or 0 if none. */
    public synchronized long last() {
        var it = entries.descendingIterator();
        while (it.hasNext()) {
            Entry e = it.next();
            if (!e.isView()) return e.gsn();
        }
        return 0;
    }

    /**
     * Up to {@code max} requests from GSN {@code from} to {@code to}, with the views between them, once
     * this site has delivered up to {@code to} (waits up to {@code wait}); null if it does not hold
     * {@code from} (outside the window) or did not get to {@code to} in time.
     */
    public synchronized List<Entry> range(long from, long to, int max, java.time.Duration wait) throws InterruptedException {
        long end = System.nanoTime() + wait.toNanos();
        while (last() < to) {
            long left = end - System.nanoTime();
            if (left <= 0 || closed) return null;
            wait(Math.max(1, left / 1_000_000));
        }
        if (ordered == 0 || first() > from) return null;
        List<Entry> out = new ArrayList<>();
        int n = 0;
        for (Entry e : entries) {
            if (e.isView()) {
                if (e.gsn() >= from - 1 && e.gsn() < to && n < max) out.add(e);
            } else if (e.gsn() >= from && e.gsn() <= to) {
                if (n == max) break;
                out.add(e);
                n++;
            }
        }
        return out;
    }

    @Override public synchronized void close() {
        closed = true;
        notifyAll();
        if (syncer != null) syncer.interrupt();
        if (out != null) {
            try {
                out.flush();
                channel.force(false);
            } catch (IOException ignored) {
                // closing
            }
            closeFile();
        }
    }
}
