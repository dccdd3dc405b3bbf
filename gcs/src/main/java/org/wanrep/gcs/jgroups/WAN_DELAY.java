package org.wanrep.gcs.jgroups;

import org.jgroups.Address;
import org.jgroups.Header;
import org.jgroups.Message;
import org.jgroups.annotations.MBean;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.stack.Protocol;
import org.jgroups.util.MessageBatch;
import org.wanrep.gcs.wan.LatencyMatrix;

import java.io.DataInput;
import java.io.DataOutput;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * WAN emulation, directly above the transport: every received message is held for the one-way
 * delay of its link, matrix[site(sender)][site(self)], plus optional uniform jitter, keeping each
 * link FIFO (one lane per sender and OOB flag, each drained by its own virtual thread). The sender
 * stamps its site index in a 2-byte header on the way down. Without a matrix, or on a zero-delay
 * link, messages pass straight through.
 */
@MBean(description = "Per-link WAN delay from a latency matrix")
public class WAN_DELAY extends Protocol {
    public static final short PROTOCOL_ID = 1760;
    public static final short HEADER_ID = 1761;

    static {
        ClassConfigurator.addProtocol(PROTOCOL_ID, WAN_DELAY.class);
        ClassConfigurator.add(HEADER_ID, SiteHeader.class);
    }

    private volatile LatencyMatrix matrix;
    private volatile int self = -1;
    private volatile double jitterMs;
    private final Map<Object, Lane> lanes = new ConcurrentHashMap<>();

    /** Sets the matrix and this member's site before the channel connects. */
    public WAN_DELAY configure(LatencyMatrix matrix, String site, double jitterMs) {
        this.matrix = matrix;
        this.self = matrix == null ? -1 : matrix.indexOf(site);
        this.jitterMs = jitterMs;
        return this;
    }

    /**
     * Fault injection: the sites whose traffic this member drops on receipt, as a network partition
     * would (TCP connections stay up, so only the failure detector's timeout notices). Dropping on
     * receipt only, by the receiver's current state, lets retransmissions through once the partition
     * heals: the reliable streams below the total order then recover, as after a real partition.
     */
    private volatile java.util.Set<String> partitionedFrom = java.util.Set.of();

    /** Drops (from now on) everything received from these sites; an empty set heals. */
    public void partitionFrom(java.util.Set<String> sites) { partitionedFrom = java.util.Set.copyOf(sites); }

    public java.util.Set<String> partitionedFrom() { return partitionedFrom; }

    @Override public Object down(Message msg) {
        if (self >= 0) msg.putHeader(PROTOCOL_ID, new SiteHeader((short) self));
        return down_prot.down(msg);
    }

    /** Whether a received message must be dropped: its sender's site is cut off from this member. */
    private boolean dropped(Message msg) {
        java.util.Set<String> cut = partitionedFrom;
        if (cut.isEmpty() || msg.getSrc() == null) return false;
        String name = org.jgroups.util.NameCache.get(msg.getSrc());
        if (name == null) return false;
        int slash = name.indexOf('/');
        return cut.contains(slash < 0 ? name : name.substring(0, slash));
    }

    private long delayNanos(Message msg) {
        if (self < 0) return 0;
        SiteHeader h = msg.getHeader(PROTOCOL_ID);
        if (h == null) return 0;
        if (h.site < 0) return 0;
        double ms = matrix.delay(h.site, self);
        if (jitterMs > 0) ms += ThreadLocalRandom.current().nextDouble(jitterMs);
        return (long) (ms * 1_000_000);
    }

    @Override public Object up(Message msg) {
        if (dropped(msg)) return null;
        long d = delayNanos(msg);
        if (d <= 0) return up_prot.up(msg);
        lane(msg.getSrc(), msg.isFlagSet(Message.Flag.OOB)).add(msg, d);
        return null;
    }

    @Override public void up(MessageBatch batch) {
        batch.removeIf(this::dropped, true);   // every message of a cut-off sender (false would remove the first only)
        if (self < 0 || batch.size() == 0) { if (batch.size() > 0) up_prot.up(batch); return; }
        // the first message that is there: a batch may hold empty slots, which FastArray's iterator
        // skips in hasNext() but not in a bare next()
        Message first = null;
        for (Message m : batch) { first = m; break; }
        if (first == null || delayNanos(first) <= 0) { up_prot.up(batch); return; }
        // the transport reuses the batch: take the messages out, each goes through its lane
        for (Message m : batch) lane(batch.sender(), m.isFlagSet(Message.Flag.OOB)).add(m, delayNanos(m));
        batch.removeIf(m -> true, true);
    }

    private Lane lane(Address sender, boolean oob) {
        return lanes.computeIfAbsent(new LaneKey(sender, oob), k -> new Lane(k.toString()));
    }

    @Override public void stop() {
        for (Lane l : lanes.values()) l.thread.interrupt();
        lanes.clear();
        super.stop();
    }

    private record LaneKey(Address sender, boolean oob) {}
    private record Timed(long due, Message msg) {}

    private final class Lane {
        final LinkedBlockingQueue<Timed> queue = new LinkedBlockingQueue<>();
        final Thread thread;
        long lastDue;   // guarded by this

        Lane(String name) {
            thread = Thread.ofVirtual().name("wan-delay-" + name).start(this::drain);
        }

        synchronized void add(Message m, long delay) {
            long due = Math.max(lastDue, System.nanoTime() + delay);
            lastDue = due;
            queue.add(new Timed(due, m));
        }

        void drain() {
            try {
                while (true) {
                    Timed t = queue.take();
                    long wait;
                    while ((wait = t.due - System.nanoTime()) > 0) LockSupport.parkNanos(wait);
                    if (Thread.interrupted()) return;
                    try {
                        up_prot.up(t.msg);
                    } catch (Throwable e) {
                        log.error("%s: delivering a delayed message failed: %s", local_addr, e);
                    }
                }
            } catch (InterruptedException e) {
                // stopping
            }
        }
    }

    /** The sender's site, as its index in the latency matrix. */
    public static final class SiteHeader extends Header {
        short site;

        public SiteHeader() {}
        SiteHeader(short site) { this.site = site; }

        @Override public short getMagicId() { return HEADER_ID; }
        @Override public Supplier<? extends Header> create() { return SiteHeader::new; }
        @Override public int serializedSize() { return Short.BYTES; }
        @Override public void writeTo(DataOutput out) throws java.io.IOException { out.writeShort(site); }
        @Override public void readFrom(DataInput in) throws java.io.IOException { site = in.readShort(); }
        @Override public String toString() { return "site=" + site; }
    }
}
