package org.wanrep.gcs.jgroups;

import org.jgroups.Header;
import org.jgroups.Message;
import org.jgroups.annotations.MBean;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.stack.Protocol;
import org.jgroups.util.MessageBatch;
import org.wanrep.gcs.wan.LatencyMatrix;

import java.io.DataInput;
import java.io.DataOutput;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

/**
 * WAN emulation, directly above the transport: every received message comes up the one-way delay of its
 * link, matrix[site(sender)][site(self)], plus optional uniform jitter, after it was sent, keeping each
 * link FIFO. The sender stamps its site index, send time and machine in a header on the way down. The holding is
 * done below, by the transport's message processing policy ({@link WanDelayPolicy}: one lane per
 * sender and OOB flag, fed by the thread that read the message off the connection, drained at the
 * due times by the lane's thread, whatever is due as one batch; what is due on arrival goes up on the reading
 * thread), which reads the matrix, site and jitter configured here. Without a matrix, or on a zero-delay link,
 * messages pass straight through.
 * Fault injection ({@link #partitionFrom}) drops here, as messages come up at their due time.
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
     * heals: the reliable streams below the total order then recover, as after a real partition. A
     * message is dropped when it comes out of the emulated link (at its due time): what was on the
     * wire when the partition started is lost with it.
     */
    private volatile java.util.Set<String> partitionedFrom = java.util.Set.of();

    /** Drops (from now on) everything received from these sites; an empty set heals. */
    public void partitionFrom(java.util.Set<String> sites) { partitionedFrom = java.util.Set.copyOf(sites); }

    public java.util.Set<String> partitionedFrom() { return partitionedFrom; }

    @Override public Object down(Message msg) {
        if (self >= 0) msg.putHeader(PROTOCOL_ID, new SiteHeader((short) self, System.nanoTime(), HOST));
        return down_prot.down(msg);
    }

    /**
     * This machine, for the send time a message carries: {@link System#nanoTime} is the kernel's monotonic clock on
     * Linux, one for every process of a machine since it booted, so a stamp is only read where the boot id it came
     * with is this one (elsewhere a random number: stamps then count only within this process).
     */
    static final long HOST = hostId();

    private static long hostId() {
        try {
            String boot = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/sys/kernel/random/boot_id")).trim();
            if (!boot.isEmpty()) return java.util.UUID.nameUUIDFromBytes(boot.getBytes(java.nio.charset.StandardCharsets.US_ASCII)).getMostSignificantBits();
        } catch (java.io.IOException | RuntimeException e) {
            // not Linux: within this process only
        }
        return new java.security.SecureRandom().nextLong();
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

    /**
     * When the emulated link from its sender lets a message received at {@code now} arrive ({@link System#nanoTime}):
     * its sending plus the link's delay (and jitter), as on a real link, whose delay includes the time a message takes to
     * reach the receiver; from its receipt where the send time cannot be read here (another machine's clock, no
     * header). So what loopback and the scheduler already spent counts towards the delay instead of adding to it.
     * {@code delay}: {@link #delayNanos} of the message, positive.
     */
    long dueNanos(Message msg, long now, long delay) {
        SiteHeader h = msg.getHeader(PROTOCOL_ID);
        long from = h != null && h.host == HOST && h.sent - now <= 0 ? h.sent : now;
        return from + delay;
    }

    /** How long the link from this message's sender to this member holds it (0: no matrix, no site header, or a zero-delay link without jitter). */
    long delayNanos(Message msg) {
        if (self < 0) return 0;
        SiteHeader h = msg.getHeader(PROTOCOL_ID);
        if (h == null) return 0;
        if (h.site < 0) return 0;
        double ms = matrix.delay(h.site, self);
        if (jitterMs > 0) ms += ThreadLocalRandom.current().nextDouble(jitterMs);
        return (long) (ms * 1_000_000);
    }

    /** Checks that the transport delays what arrives (the policy does, this protocol only stamps and drops). */
    @Override public void start() throws Exception {
        super.start();
        if (matrix != null && !(getTransport().msgProcessingPolicy() instanceof WanDelayPolicy))
            throw new IllegalStateException("WAN_DELAY with a latency matrix needs the transport's message_processing_policy="
                    + WanDelayPolicy.class.getName() + ", which holds received messages for their link's delay");
    }

    /** Reaches this protocol at its due time (the transport's {@link WanDelayPolicy} held it): only a cut-off site's traffic stops here. */
    @Override public Object up(Message msg) {
        if (dropped(msg)) return null;
        return up_prot.up(msg);
    }

    @Override public void up(MessageBatch batch) {
        batch.removeIf(this::dropped, true);   // every message of a cut-off sender (false would remove the first only)
        if (batch.size() > 0) up_prot.up(batch);
    }

    /** The sender's site, as its index in the latency matrix, and when it sent the message, on which machine's clock. */
    public static final class SiteHeader extends Header {
        short site;
        long sent, host;

        public SiteHeader() {}
        SiteHeader(short site, long sent, long host) {
            this.site = site;
            this.sent = sent;
            this.host = host;
        }

        @Override public short getMagicId() { return HEADER_ID; }
        @Override public Supplier<? extends Header> create() { return SiteHeader::new; }
        @Override public int serializedSize() { return Short.BYTES + 2 * Long.BYTES; }
        @Override public void writeTo(DataOutput out) throws java.io.IOException {
            out.writeShort(site);
            out.writeLong(sent);
            out.writeLong(host);
        }
        @Override public void readFrom(DataInput in) throws java.io.IOException {
            site = in.readShort();
            sent = in.readLong();
            host = in.readLong();
        }
        @Override public String toString() { return "site=" + site; }
    }
}
