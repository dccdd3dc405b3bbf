package org.wanrep.txn;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The latest ordered requests this site delivered, as delivered (GSN, sending member, payload), with the primary
 * views installed between them, so that a site that rejoins can fetch what it missed and replay it under the same
 * rules ({@link ReplicationEngine}): at most {@code window} requests and {@code maxBytes} of them.
 *
 * <p>The requests live in a file, appended as they are delivered; memory keeps only where each one starts (8 bytes a
 * request) and the views. So a client's large updates or COPYs cost the site disk, within {@code maxBytes}, never
 * heap. The file is the site's {@code SITE.orderlog} (fsynced in batches, loaded at start) or, with no directory
 * configured, a temporary file deleted when the log closes. The log only serves other sites, so a tail lost in a crash,
 * or what a failed write dropped, merely shortens what this site can serve. GSNs in the log are contiguous; a gap
 * (this site itself rejoined further ahead) starts it afresh.
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

    /** A view the log holds: installed after GSN {@code gsn}, written at {@code offset} of the file. */
    private record View(long gsn, List<String> members, long offset) {}

    /** The file is rewritten without what the log no longer holds once that is at least this much and at least what it holds. */
    static final long MIN_REWRITE_BYTES = 8L << 20;

    private static final int BUFFER = 1 << 16, PIECE = 8 << 10;

    private final int window;
    private final long maxBytes;
    private final long minRewriteBytes;
    private final Path file;
    private final boolean durable;   // the site's own log file (fsynced, loaded at start), not a temporary one

    // the index: ordered request firstGsn + i starts at offset offsets[(head + i) % offsets.length], for i < ordered
    private long[] offsets = new long[1024];
    private int head, ordered;
    private long firstGsn;
    private final ArrayDeque<View> views = new ArrayDeque<>();

    private long end;                // bytes appended to the file, buffered ones included
    private CountingOutput counted;
    private DataOutputStream out;    // null while no file is open for appending (a write failed)
    private FileChannel channel;
    private boolean dirty;
    private final Thread syncer;
    private volatile boolean closed;

    /** A log in a temporary file, deleted when it closes (tests, or no directory configured): it lasts as long as the site. */
    public static OrderedLog temporary(int window, long maxBytes) {
        try {
            Path f = Files.createTempFile("wanrep-", ".orderlog");
            f.toFile().deleteOnExit();
            return new OrderedLog(f, false, window, maxBytes, MIN_REWRITE_BYTES);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("cannot create a temporary ordered-request log", e);
        }
    }

    /** Opens (or creates) the log file and loads the latest {@code window} requests (up to {@code maxBytes}) it holds. */
    public static OrderedLog open(Path file, int window, long maxBytes) {
        return new OrderedLog(file, true, window, maxBytes, MIN_REWRITE_BYTES);
    }

    /** As {@link #open(Path, int, long)}, rewriting the file once {@code minRewriteBytes} of it are no longer held (tests). */
    static OrderedLog open(Path file, int window, long maxBytes, long minRewriteBytes) {
        return new OrderedLog(file, true, window, maxBytes, minRewriteBytes);
    }

    private OrderedLog(Path file, boolean durable, int window, long maxBytes, long minRewriteBytes) {
        this.window = Math.max(1, window);
        this.maxBytes = Math.max(1, maxBytes);
        this.minRewriteBytes = minRewriteBytes;
        this.file = file;
        this.durable = durable;
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            if (durable && Files.exists(file)) load();
            openAt(end);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("cannot open the ordered-request log " + file, e);
        }
        syncer = durable ? Thread.ofPlatform().daemon().name("wanrep-log-sync").start(this::syncLoop) : null;
    }

    private void load() throws IOException {
        try (CountingInput counter = new CountingInput(new BufferedInputStream(Files.newInputStream(file), BUFFER));
             DataInputStream in = new DataInputStream(counter)) {
            while (true) {
                long at = counter.count;
                Entry e;
                try {
                    e = read(in);
                } catch (EOFException | RuntimeException torn) {
                    break;   // a torn tail from a crash: what came before is intact (and appends go on from there)
                }
                end = counter.count;
                if (!e.isView() && ordered > 0 && e.gsn() != last() + 1) reset();   // the site started its log afresh here
                index(e, at);
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
            byte[] p = e.payload();
            o.writeInt(p.length);
            // in pieces smaller than the buffer, so always copied: the channel's stream keeps the last array handed to it
            for (int at = 0; at < p.length; at += PIECE) o.write(p, at, Math.min(PIECE, p.length - at));
        } else {
            o.writeInt(e.members().size());
            for (String m : e.members()) o.writeUTF(m);
        }
    }

    /** Opens the file for appending at {@code size}, cutting off whatever follows (a torn tail, or everything at 0). */
    private void openAt(long size) throws IOException {
        channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        if (channel.size() > size) channel.truncate(size);
        channel.position(size);
        counted = new CountingOutput(new BufferedOutputStream(Channels.newOutputStream(channel), BUFFER), size);
        out = new DataOutputStream(counted);
        end = size;
    }

    /** Records the ordered delivery {@code gsn} (ignored if already there). */
    public synchronized void ordered(long gsn, org.wanrep.gcs.MsgId id, byte[] payload) {
        long last = last();
        if (ordered > 0 && gsn <= last) return;   // replayed while catching up, already logged
        if (ordered > 0 && gsn != last + 1) {
            LOG.info("ordered-request log: GSN {} after {}: starting afresh", gsn, last);
            reset();
        }
        append(new Entry(gsn, id.sender(), id.seq(), payload, null));
    }

    /** Forgets everything (the group started a new history: GSNs count from 1 again). */
    public synchronized void clear() {
        reset();
        try {
            closeFile();
            openAt(0);
        } catch (IOException e) {
            broken("truncate", e);
        }
    }

    /** Records a primary view installed after GSN {@code afterGsn}. */
    public synchronized void view(long afterGsn, List<String> members) {
        if (ordered > 0 && afterGsn < last()) return;
        append(new Entry(afterGsn, null, 0, null, List.copyOf(members)));
    }

    private void append(Entry e) {
        if (closed) return;
        try {
            if (out == null) openAt(0);   // after a failed write: start afresh (the index was emptied then)
            long at = end;
            write(out, e);
            end = counted.count;
            dirty = true;
            index(e, at);
            long from = heldFrom();
            if (from >= Math.max(minRewriteBytes, end - from)) rewrite(from);
        } catch (IOException x) {
            broken("write", x);
        }
        notifyAll();
    }

    /** A write to the file failed: the log holds nothing (the next request starts it afresh in a new file). */
    private void broken(String what, IOException e) {
        if (out != null) LOG.warn("ordered-request log {}: {} failed ({}): it holds nothing before the next request", file, what, e.toString());
        reset();
        closeFile();
    }

    private void reset() {
        ordered = 0;   // push starts the ring afresh
        views.clear();
    }

    /** Holds {@code e}, written at {@code at} (its GSN follows the last one held, or starts the log), then trims. */
    private void index(Entry e, long at) {
        if (e.isView()) views.addLast(new View(e.gsn(), e.members(), at));
        else push(e.gsn(), at);
        trim();
    }

    private void push(long gsn, long at) {
        if (ordered == 0) {
            head = 0;
            firstGsn = gsn;
        }
        if (ordered == offsets.length) {   // grows up to the window (or what maxBytes lets it hold)
            long[] more = new long[offsets.length * 2];
            for (int i = 0; i < ordered; i++) more[i] = offsetAt(i);
            offsets = more;
            head = 0;
        }
        offsets[(head + ordered) % offsets.length] = at;
        ordered++;
    }

    private long offsetAt(int i) { return offsets[(head + i) % offsets.length]; }

    /** Drops the oldest requests beyond the window or beyond maxBytes, and the views before what is left. */
    private void trim() {
        while (ordered > window || (ordered > 0 && end - offsetAt(0) > maxBytes)) {
            head = (head + 1) % offsets.length;
            ordered--;
            firstGsn++;
        }
        while (!views.isEmpty() && ordered > 0 && views.peekFirst().gsn() < firstGsn - 1) views.removeFirst();
    }

    /** Where the first entry the log holds starts in the file ({@link #end} if it holds none). */
    private long heldFrom() {
        long from = ordered > 0 ? offsetAt(0) : end;
        return views.isEmpty() ? from : Math.min(from, views.peekFirst().offset());
    }

    /** The file keeps only what the log holds, from {@code from} on: copied to a new file, then renamed over the old one. */
    private void rewrite(long from) throws IOException {
        out.flush();
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (FileChannel src = FileChannel.open(file, StandardOpenOption.READ);
             FileChannel dst = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            for (long at = from; at < end; ) at += src.transferTo(at, end - at, dst);
            if (durable) dst.force(false);
        }
        long size = end - from;
        closeFile();
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        for (int i = 0; i < ordered; i++) offsets[(head + i) % offsets.length] -= from;
        List<View> kept = new ArrayList<>(views);
        views.clear();
        for (View v : kept) views.addLast(new View(v.gsn(), v.members(), v.offset() - from));
        openAt(size);
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
            broken("sync", e);
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

    /** The file the requests are in. */
    Path file() { return file; }

    /** The first GSN held, or 0 if none. */
    public synchronized long first() { return ordered == 0 ? 0 : firstGsn; }

    /** The last GSN held, or 0 if none. */
    public synchronized long last() { return ordered == 0 ? 0 : firstGsn + ordered - 1; }

    /**
     * Up to {@code max} requests from GSN {@code from} to {@code to}, with the views between them, once
     * this site has delivered up to {@code to} (waits up to {@code wait}); null if it does not hold
     * {@code from} (outside the window) or did not get to {@code to} in time.
     */
    public synchronized List<Entry> range(long from, long to, int max, java.time.Duration wait) throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        while (last() < to) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || closed) return null;
            wait(Math.max(1, left / 1_000_000));
        }
        if (ordered == 0 || first() > from) return null;
        // the file holds the entries in the order they came: read from the first one wanted
        long start = from <= last() ? offsetAt((int) (from - firstGsn)) : end;
        for (View v : views) if (v.gsn() >= from - 1 && v.gsn() < to) start = Math.min(start, v.offset());
        List<Entry> result = new ArrayList<>();
        try {
            if (out != null) out.flush();
            try (CountingInput counter = new CountingInput(new BufferedInputStream(
                    Channels.newInputStream(FileChannel.open(file, StandardOpenOption.READ).position(start)), BUFFER));
                 DataInputStream in = new DataInputStream(counter)) {
                int n = 0;
                while (start + counter.count < end) {
                    Entry e = read(in);
                    if (e.isView()) {
                        if (e.gsn() >= from - 1 && e.gsn() < to && n < max) result.add(e);
                    } else if (e.gsn() > to) {
                        break;
                    } else if (e.gsn() >= from) {
                        if (n == max) break;
                        result.add(e);
                        n++;
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("ordered-request log {}: cannot read GSN {} to {} ({})", file, from, to, e.toString());
            return null;
        }
        return result;
    }

    @Override public synchronized void close() {
        closed = true;
        notifyAll();
        if (syncer != null) syncer.interrupt();
        if (out != null) {
            try {
                out.flush();
                if (durable) channel.force(false);
            } catch (IOException ignored) {
                // closing
            }
            closeFile();
        }
        if (!durable) {
            try {
                Files.deleteIfExists(file);
            } catch (IOException ignored) {
                // a temporary file: deleteOnExit has it too
            }
        }
    }

    /** Counts the bytes written through it: where the next entry starts in the file. */
    private static final class CountingOutput extends FilterOutputStream {
        long count;
        CountingOutput(OutputStream o, long count) { super(o); this.count = count; }
        @Override public void write(int b) throws IOException { out.write(b); count++; }
        @Override public void write(byte[] b, int off, int len) throws IOException { out.write(b, off, len); count += len; }
    }

    /** Counts the bytes read through it: where the next entry starts, from where reading began. */
    private static final class CountingInput extends FilterInputStream {
        long count;
        CountingInput(InputStream in) { super(in); }
        @Override public int read() throws IOException {
            int b = in.read();
            if (b >= 0) count++;
            return b;
        }
        @Override public int read(byte[] b, int off, int len) throws IOException {
            int n = in.read(b, off, len);
            if (n > 0) count += n;
            return n;
        }
        @Override public long skip(long n) throws IOException {
            long s = in.skip(n);
            count += s;
            return s;
        }
    }
}
