package org.wanrep.gcs.jgroups;

import org.jgroups.Address;
import org.jgroups.Message;
import org.jgroups.protocols.TP;
import org.jgroups.protocols.TpHeader;
import org.jgroups.util.AsciiString;
import org.jgroups.util.MaxOneThreadPerSender;
import org.jgroups.util.MessageBatch;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The transport's message processing policy when the WAN is emulated ({@link WAN_DELAY}): the thread that read
 * a message or batch off a TCP connection computes its due time (its sending, from the sender's header, plus the
 * link's delay and jitter; see {@link WAN_DELAY#dueNanos}) and queues it on the {@link DelayLane} of its sender and
 * OOB flag; that lane's thread passes it up the stack at its due time, together with everything else due then, as one
 * {@link MessageBatch}. So a received message changes threads once (JGroups' default policy hands it to a
 * pool thread, which handed it to the lane). One that is due already when it is read (loopback and the scheduler
 * took longer than the emulated delay: two thirds of the messages of a busy cluster on the {@code lan} matrix's
 * 0.1 ms) goes up on the receiving thread itself while its lane is empty ({@link #passNow}). The receiving thread
 * never waits on a lane or for a due time, so TCP connections are always read and no send waits on a stalled reader.
 *
 * <p>Per link (sender, OOB flag) the order is the arrival order; regular and OOB messages have lanes of their
 * own, so an OOB message (credits, heartbeats, retransmission requests) never waits behind a regular one whose
 * processing blocks, as with JGroups' own policy. Messages without a delay (no matrix, a zero-delay link)
 * take JGroups' default way ({@link MaxOneThreadPerSender}), as does loopback, unless their sender already has
 * a lane: then they queue behind its earlier messages.
 */
public class WanDelayPolicy extends MaxOneThreadPerSender {
    private record LaneKey(Address sender, boolean oob) {}

    private final Map<LaneKey, DelayLane> lanes = new ConcurrentHashMap<>();
    private volatile WAN_DELAY wan;

    /** Sets the protocol whose matrix, site and jitter apply (else found in the transport's stack on first use). */
    WanDelayPolicy wan(WAN_DELAY w) { wan = w; return this; }

    private WAN_DELAY wan() {
        WAN_DELAY w = wan;
        if (w == null && tp != null && tp.getProtocolStack() != null) w = wan = tp.getProtocolStack().findProtocol(WAN_DELAY.class);
        return w;
    }

    @Override public boolean process(Message msg, boolean oob) {
        long now = System.nanoTime();
        WAN_DELAY w = wan();
        Address src = msg.getSrc();
        if (w == null || src == null || !sameCluster(msg)) return super.process(msg, oob);
        long d = w.delayNanos(msg);
        LaneKey k = new LaneKey(src, oob);
        boolean mcast = msg.getDest() == null;
        long due = d > 0 ? w.dueNanos(msg, now, d) : now;
        if (d > 0 && due - now <= 0 && passNow(k, List.of(msg), mcast)) return true;
        while (true) {
            DelayLane lane = d > 0 ? lane(k) : lanes.get(k);
            if (lane == null) return super.process(msg, oob);
            if (lane.add(msg, due, mcast)) return true;
            // that lane retired meanwhile (and left the map): take a new one
        }
    }

    @Override public boolean process(MessageBatch batch, boolean oob) {
        long now = System.nanoTime();
        WAN_DELAY w = wan();
        if (w == null || batch.isEmpty() || batch.sender() == null || !sameCluster(batch)) return super.process(batch, oob);
        Message[] msgs = new Message[batch.size()];
        long[] dues = new long[msgs.length];
        int n = 0;
        boolean delayed = false, allDue = true;
        for (Message m : batch) {   // the iterator skips empty slots
            if (n == msgs.length) break;
            long d = w.delayNanos(m);
            delayed |= d > 0;
            msgs[n] = m;
            dues[n] = d > 0 ? w.dueNanos(m, now, d) : now;
            allDue &= dues[n++] - now <= 0;
        }
        LaneKey k = new LaneKey(batch.sender(), oob);
        if (delayed && allDue && passNow(k, java.util.Arrays.asList(msgs).subList(0, n), batch.multicast())) return true;
        while (true) {
            DelayLane lane = delayed ? lane(k) : lanes.get(k);
            if (lane == null) return super.process(batch, oob);
            if (lane.add(msgs, dues, n, batch.multicast())) return true;
        }
    }

    /**
     * Messages of one link that are due already (their sending plus the link's delay is past: reaching this member took
     * longer than the emulated delay) go up the stack on the receiving thread, as one batch, unless their lane holds or
     * passes messages now (those are ahead of them: they queue behind). False then. What the stack above does with them
     * never blocks this thread: the total order's step is short and under its own lock, and JGroups' own sends from it
     * (acknowledgements, retransmissions, credits) go through the bundler's threads ({@link DirectSendBundler}).
     */
    private boolean passNow(LaneKey k, List<Message> due, boolean mcast) {
        MessageBatch.Mode mode = k.oob() ? MessageBatch.Mode.OOB : MessageBatch.Mode.REG;
        DelayLane lane = lanes.get(k);
        if (lane == null) {
            deliver(k.sender(), mode, due, mcast);
            return true;
        }
        return lane.passIfIdle(() -> deliver(k.sender(), mode, due, mcast));
    }

    private DelayLane lane(LaneKey k) {
        return lanes.computeIfAbsent(k, this::newLane);
    }

    private DelayLane newLane(LaneKey k) {
        DelayLane[] self = new DelayLane[1];
        MessageBatch.Mode mode = k.oob() ? MessageBatch.Mode.OOB : MessageBatch.Mode.REG;
        String name = "wan-delay-" + tp.getAddress() + "<-" + k.sender() + (k.oob() ? "-oob" : "");
        self[0] = new DelayLane(name, (run, mcast) -> deliver(k.sender(), mode, run, mcast), () -> lanes.remove(k, self[0]));
        return self[0];
    }

    /** On the lane's thread: the due messages as one batch, through the transport's usual checks (cluster name, own multicasts). */
    private void deliver(Address sender, MessageBatch.Mode mode, List<Message> run, boolean mcast) {
        TP t = tp;
        MessageBatch batch = new MessageBatch(mcast ? null : t.getAddress(), sender, t.getClusterNameAscii(), mcast, mode, run.size());
        for (Message m : run) batch.add(m);
        try {
            t.passBatchUp(batch, true, true);
        } catch (Throwable e) {
            log.error("%s: passing up a delayed batch from %s failed: %s", t.getAddress(), sender, e);
        }
    }

    /** As TP's check for a single message: one stamped with another cluster's name goes the default way, which drops it. */
    private boolean sameCluster(Message msg) {
        AsciiString ours = tp.getClusterNameAscii();
        if (ours == null) return true;
        TpHeader h = msg.getHeader(tp.getId());
        byte[] theirs = h == null ? null : h.clusterName();
        return theirs == null || ours.equals(theirs);
    }

    private boolean sameCluster(MessageBatch batch) {
        AsciiString ours = tp.getClusterNameAscii();
        return ours == null || ours.equals(batch.clusterName());
    }

    /** The lanes' count and held messages (tests). */
    int lanes() { return lanes.size(); }

    /** Stops every lane (the channel stops); messages still held are dropped. */
    void stopLanes() {
        for (DelayLane l : lanes.values()) l.stop();
        lanes.clear();
    }

    @Override public void destroy() {
        stopLanes();
        super.destroy();
    }
}
