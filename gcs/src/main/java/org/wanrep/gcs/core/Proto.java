package org.wanrep.gcs.core;

import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.MsgId;

import java.util.List;
import java.util.Map;

/**
 * The messages of the total-order protocol. The transport underneath is reliable and FIFO per
 * sender within a membership view (JGroups NAKACK2/UNICAST3); a crashed sender's last messages may
 * reach only some members, and the flush at a view change repairs exactly that.
 */
public sealed interface Proto {

    /**
     * Application payload, multicast by its sender in {@code epoch}. {@code sites} is null, or, for a
     * configuration change, the configured site set that takes effect at this message's GSN.
     * {@code heldThrough}: piggybacked stability, the sender's {@link Ack#heldThrough} in {@code epoch} when it
     * sent this (0: says nothing).
     */
    record Data(long epoch, long seq, Delivery delivery, byte[] payload, List<String> sites, long heldThrough) implements Proto {
        public Data(long epoch, long seq, Delivery delivery, byte[] payload) { this(epoch, seq, delivery, payload, null, 0); }
        public Data(long epoch, long seq, Delivery delivery, byte[] payload, List<String> sites) { this(epoch, seq, delivery, payload, sites, 0); }
    }

    /**
     * Sequencer of {@code epoch}: slots firstSlot, firstSlot+1, ... hold these messages. {@code heldThrough}:
     * piggybacked stability as in {@link Data}, taken after the sequencer assigned these slots itself (it
     * holds the data of everything it orders, so this usually covers them).
     */
    record Order(long epoch, long firstSlot, List<MsgId> ids, long heldThrough) implements Proto {
        public Order(long epoch, long firstSlot, List<MsgId> ids) { this(epoch, firstSlot, ids, 0); }
    }

    /**
     * Stability: the sender holds every slot up to {@code heldThrough} (order and data), and has
     * received every message of each sender up to {@code received.get(sender)}. Also the read lease
     * (see {@link TotalOrderCore#leaseExpiry}): {@code stamp} is the sender's clock when it sent this,
     * {@code echo} the latest stamp the sender received from each member.
     */
    record Ack(long epoch, long heldThrough, Map<String, Long> received, long stamp, Map<String, Long> echo) implements Proto {
        /** An acknowledgement that carries no lease information (stamp 0, nothing echoed). */
        public Ack(long epoch, long heldThrough, Map<String, Long> received) { this(epoch, heldThrough, received, 0, Map.of()); }
    }

    /** One slot assignment; {@code id == null} is a skipped slot. {@code level} ranks authorities (see Slots). */
    record Assignment(long slot, MsgId id, long level) {}

    /** A retained message as reported in a flush ({@code sites}: as in {@link Data}). */
    record Held(MsgId id, Delivery delivery, byte[] payload, List<String> sites) {
        public Held(MsgId id, Delivery delivery, byte[] payload) { this(id, delivery, payload, null); }
    }

    /**
     * Member to flush leader: everything it retains beyond stability, frozen at the view change, and the
     * configured sites in force after its delivered prefix ({@code sites}, set by the change delivered at
     * {@code sitesGsn}; 0 for the initial configuration; an empty list: not reported).
     */
    record FlushState(long viewId, Epoch installedEpoch, List<String> installedMembers, boolean mayBootstrap,
                      Epoch acceptedEpoch, Epoch acceptedBase, List<String> acceptedMembers, long nextDeliver, long gsn,
                      List<Assignment> assignments, List<Held> held, Map<String, Long> received,
                      List<String> sites, long sitesGsn) implements Proto {
        public FlushState(long viewId, Epoch installedEpoch, List<String> installedMembers, boolean mayBootstrap,
                          Epoch acceptedEpoch, Epoch acceptedBase, List<String> acceptedMembers, long nextDeliver, long gsn,
                          List<Assignment> assignments, List<Held> held, Map<String, Long> received) {
            this(viewId, installedEpoch, installedMembers, mayBootstrap, acceptedEpoch, acceptedBase, acceptedMembers,
                    nextDeliver, gsn, assignments, held, received, List.of(), 0);
        }
    }

    /**
     * Leader to members, phase 1: the rest of the old epoch's sequence ({@code assignments} covering
     * fromSlot..startSlot-1), the data some continuing member lacks, the RELIABLE messages to complete,
     * and the new primary view, whose members are the view's members of the configured sites {@code sites}
     * in force at {@code gsnAtStart} (set by the change delivered at {@code sitesGsn}; empty: not known).
     */
    record Proposal(long viewId, Epoch newEpoch, Epoch baseEpoch, List<String> members, long fromSlot,
                    long startSlot, long gsnAtStart, List<Assignment> assignments, List<Held> data,
                    List<Held> reliable, List<String> sites, long sitesGsn) implements Proto {
        public Proposal(long viewId, Epoch newEpoch, Epoch baseEpoch, List<String> members, long fromSlot,
                        long startSlot, long gsnAtStart, List<Assignment> assignments, List<Held> data, List<Held> reliable) {
            this(viewId, newEpoch, baseEpoch, members, fromSlot, startSlot, gsnAtStart, assignments, data, reliable, List.of(), 0);
        }
    }

    /** Member to leader: proposal stored. */
    record ProposalAck(long viewId) implements Proto {}

    /** Leader to members, phase 2: deliver the proposal and install the view. */
    record Commit(long viewId) implements Proto {}
}
