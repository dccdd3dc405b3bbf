package org.wanrep.gcs.core;

import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.GcsMessage;
import org.wanrep.gcs.GcsView;
import org.wanrep.gcs.Members;
import org.wanrep.gcs.MsgId;
import org.wanrep.gcs.NotPrimaryException;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One member's total-order protocol as pure handlers: messages and ticks in, {@link Effects} out.
 * Single-threaded; it never reads a clock or a socket, so the simulator can drive it in virtual time.
 *
 * <p>Within an epoch (an installed primary view) the sender multicasts DATA, the sequencer assigns
 * slots in ORDER batches, every member acknowledges the prefix of slots it holds (in paced ACKs, and
 * piggybacked on every DATA and ORDER it multicasts), AGREED messages are
 * delivered in slot order once held, SAFE and OPT_SAFE once a majority of the view's members holds them
 * (uniform: any later primary view continues from a majority of this one, so one of its members holds
 * the slot and the flush keeps it there; a paused or cut-off minority member does not hold delivery up
 * until it is excluded). The GSN is the
 * count of delivered messages, so slots a flush had to skip leave no gap. At a view change every
 * member freezes and reports its state to the new sequencer, which plans the rest of the old epoch
 * ({@link FlushPlanner}) and installs the new one in two phases (proposal, commit).
 *
 * <p>Time enters only through {@code now} (milliseconds on the caller's clock) and {@link #onTick}; the
 * driver calls {@code onTick} after every step (message, multicast, view) and otherwise at
 * {@link #nextDeadline}, before which a tick has nothing to do.
 */
public final class TotalOrderCore {
    private enum Mode { NOT_PRIMARY, FLUSHING, NORMAL }

    /** A held message. */
    private static final class Entry {
        final MsgId id; final Delivery delivery; final byte[] payload;
        final List<String> sites;   // a configuration change's site set, else null
        boolean delivered, optDelivered;
        Entry(MsgId id, Delivery delivery, byte[] payload, List<String> sites) { this.id = id; this.delivery = delivery; this.payload = payload; this.sites = sites; }
        Proto.Held report() { return new Proto.Held(id, delivery, payload, sites); }
        GcsMessage message() { return new GcsMessage(id, delivery, payload); }
    }

    private record Assign(MsgId id, long level) {}
    private record Pending(long seq, Delivery delivery, byte[] payload, List<String> sites) {}
    private record Buffered(String from, Proto msg) {}

    private final String self;
    private final CoreConfig cfg;
    private final List<String> sequencerSites;
    private final Effects fx;

    // --- configured sites: a function of the delivered prefix (changed by ordered messages, see SiteSet)
    private List<String> sites;
    private long sitesGsn = 0;          // GSN of the change that set them (0: the initial configuration)
    private long reportedSitesGsn = 0;  // the last configuration given to the application
    private String excludedReason;      // set while this member's site is outside the installed epoch's configuration
    private List<String> lastProposed;  // this member's latest change (only to check a next one it queues behind)

    // --- membership and epoch
    private Mode mode = Mode.NOT_PRIMARY;
    private boolean mayBootstrap;                      // cleared once it has been in a primary view or left out of one
    private long lastViewId = -1;
    private List<String> viewMembers = List.of();     // latest membership view
    private Epoch installed = Epoch.NONE, acceptedEpoch = Epoch.NONE, acceptedBase = Epoch.NONE;
    private List<String> acceptedMembers = List.of();
    private long installedEpoch = 0;                   // installed.number(), carried by epoch traffic
    private long installedViewId = -1;
    private List<String> members = List.of();          // members of the installed epoch
    private String sequencer;
    private Proto.Proposal accepted;                   // plan accepted in phase 1, not yet committed
    private boolean joinedPending;                     // accepted a plan as a joiner, not yet installed
    private Proto.Proposal joinedVia;                  // that plan
    private boolean acceptedAsJoiner;                  // the accepted plan takes this member in afresh

    // --- ordering state
    private final TreeMap<Long, Assign> slots = new TreeMap<>();
    private final Map<MsgId, Entry> held = new HashMap<>();
    /** The RELIABLE messages among {@link #held}: what garbage collection looks through after every step. */
    private final Set<MsgId> heldReliable = new java.util.LinkedHashSet<>();
    private final Map<String, Long> received = new HashMap<>();
    private long nextDeliver = 1, gsn = 0, heldThrough = 0;
    /**
     * Deliveries made before a majority of the view held their slots (AGREED ones: the sequencer delivers
     * its own at once), oldest first, as {slot, GSN}; and the highest GSN known to be held by a majority.
     */
    private final ArrayDeque<long[]> notYetUniform = new ArrayDeque<>();
    private long uniformGsn = 0;
    private long mySeq = 0;

    // --- sequencer
    private long nextSlot = 1;
    private final List<MsgId> pendingOrder = new ArrayList<>();

    // --- stability: what each member said it holds (ACK or piggybacked on DATA/ORDER), and what it received (ACK)
    private final Map<String, Long> ackHeld = new HashMap<>();
    private final Map<String, Map<String, Long>> ackReceived = new HashMap<>();
    /** Our received vector has news for the others (a RELIABLE message arrived) since our last ACK. */
    private boolean receivedNews;
    /**
     * The highest heldThrough this member told in the installed epoch, in an ACK, a DATA or an ORDER, to every member
     * or (an ACK in a view of three or fewer) to the sequencer, the only one that needs it (see {@link #ackTarget}).
     */
    private long toldHeld;
    private long lastAckAt = Long.MIN_VALUE / 2;
    /** The last ACK to every member: the heartbeat (lease stamps, what this member received and holds) is due from it. */
    private long lastAllAckAt = Long.MIN_VALUE / 2;

    // --- read lease: the latest stamp each member sent us (echoed back), and ours as each member echoed it
    private final Map<String, Long> stampFrom = new HashMap<>();
    private final Map<String, Long> echoedMine = new HashMap<>();

    // --- flush
    private final Map<String, Proto.FlushState> reports = new HashMap<>();
    private final Set<String> proposalAcks = new HashSet<>();
    private Proto.Proposal leaderProposal;
    private boolean waitingForHistory;
    private final TreeMap<Long, List<Buffered>> futureFlush = new TreeMap<>();
    private final List<Buffered> futureEpoch = new ArrayList<>();

    // --- own multicasts waiting for a primary view, and own ordered multicasts not yet delivered
    private final ArrayDeque<Pending> queued = new ArrayDeque<>();
    private final TreeMap<Long, Delivery> ownPending = new TreeMap<>();

    public TotalOrderCore(String self, CoreConfig cfg, Effects fx) {
        this.self = self;
        this.cfg = cfg;
        this.sequencerSites = cfg.sequencerSites();
        this.fx = fx;
        this.sites = cfg.sites();
        this.mayBootstrap = cfg.mayBootstrap();
    }

    public String self() { return self; }
    public boolean isPrimary() { return mode == Mode.NORMAL; }
    public long epoch() { return installedEpoch; }

    /** The installed epoch's identity: number, view and the member that led its flush. */
    public Epoch epochIdentity() { return installed; }
    public long deliveredGsn() { return gsn; }

    /**
     * The highest GSN delivered here that a majority of the installed view holds (so every later primary
     * component has it): every delivered GSN under uniform delivery; under AGREED delivery possibly less,
     * since the sequencer, say, delivers its own messages before anyone else holds them. A state copied from
     * this member's replica at GSN g is the group's only once this reaches g.
     */
    public long uniformGsn() {
        pruneUniform();
        return uniformGsn;
    }

    private void pruneUniform() {
        if (mode != Mode.NORMAL || notYetUniform.isEmpty()) return;
        long m = majorityHeldThrough();
        while (!notYetUniform.isEmpty() && notYetUniform.peekFirst()[0] <= m) uniformGsn = notYetUniform.pollFirst()[1];
    }
    public String sequencer() { return mode == Mode.NORMAL ? sequencer : null; }
    public int heldCount() { return held.size(); }
    /** The longest prefix of slots this member holds (order and data), and the next slot it will deliver (for tests). */
    public long heldThrough() { return heldThrough; }
    public long nextDeliver() { return nextDeliver; }
    /** The configured sites after this member's delivered prefix. */
    public List<String> sites() { return sites; }
    /** GSN of the configuration change that set {@link #sites()} (0: the initial configuration). */
    public long sitesGsn() { return sitesGsn; }
    /** Members of a flush plan this member accepted and has not seen installed (empty if none). */
    public List<String> acceptedPlanMembers() { return acceptedMembers; }

    // ------------------------------------------------------------------ application side

    public MsgId multicast(byte[] payload, Delivery delivery, long now) {
        return multicast(payload, delivery, null, now);
    }

    /**
     * Orders a configuration change: at its GSN every member switches to {@code newSites} (if it adds or
     * removes exactly one site of the set then in force, else every member ignores it), then delivers
     * {@code payload} as an ordinary SAFE message. SAFE (uniform): once any member delivered it, every later
     * primary continues from a member that holds it, so its flush completes the change and counts the new set.
     */
    public MsgId changeSites(List<String> newSites, byte[] payload, long now) {
        // one site from the set in force, or from this member's own last change (queued changes judge one after the other)
        if (SiteSet.apply(sites, newSites) == null && (lastProposed == null || SiteSet.apply(lastProposed, newSites) == null))
            throw new IllegalArgumentException("a configuration change adds or removes exactly one site: " + sites + " -> " + newSites);
        lastProposed = List.copyOf(newSites);
        // the sequencer's site too: the leader is named from the view and the static preference list alone
        // (sequencerOf), so running, restarted and new members agree whatever the set in force
        return multicast(payload, Delivery.SAFE, List.copyOf(newSites), now);
    }

    private MsgId multicast(byte[] payload, Delivery delivery, List<String> newSites, long now) {
        switch (mode) {
            case NOT_PRIMARY -> throw new NotPrimaryException(notPrimaryReason());
            case FLUSHING -> {
                long seq = ++mySeq;
                queued.add(new Pending(seq, delivery, payload, newSites));
                return new MsgId(self, seq);
            }
            default -> {
                long seq = ++mySeq;
                sendData(seq, delivery, payload, newSites, now);
                return new MsgId(self, seq);
            }
        }
    }

    private String notPrimaryReason() {
        if (excludedReason != null) return excludedReason;
        Set<String> in = sitesOf(viewMembers);
        in.retainAll(sites);
        return "member " + self + " is not in the primary component: its view has " + in.size() + " of "
                + sites.size() + " configured sites " + in + " and needs more than " + sites.size() / 2;
    }

    private void sendData(long seq, Delivery delivery, byte[] payload, List<String> newSites, long now) {
        if (delivery.ordered()) ownPending.put(seq, delivery);
        // created now, in the epoch it goes out in (a multicast queued by a flush is sent only after install)
        Proto.Data d = new Proto.Data(installedEpoch, seq, delivery, payload, newSites, heldThrough);
        toldHeld = heldThrough;
        fx.send(null, d);
        onData(self, d, now);
    }

    // ------------------------------------------------------------------ network side

    public void onMessage(String from, Proto msg, long now) {
        switch (msg) {
            case Proto.Data d -> epochMessage(from, d, d.epoch(), now);
            case Proto.Order o -> epochMessage(from, o, o.epoch(), now);
            case Proto.Ack a -> epochMessage(from, a, a.epoch(), now);
            case Proto.FlushState s -> flushMessage(from, s, s.viewId(), now);
            case Proto.Proposal p -> flushMessage(from, p, p.viewId(), now);
            case Proto.ProposalAck a -> flushMessage(from, a, a.viewId(), now);
            case Proto.Commit c -> flushMessage(from, c, c.viewId(), now);
        }
    }

    private void epochMessage(String from, Proto msg, long epoch, long now) {
        if (excludedReason != null) return;   // outside the epoch until the next view
        if (epoch > installedEpoch) { futureEpoch.add(new Buffered(from, msg)); return; }
        // an older epoch is settled by its flush; a frozen member takes no more of its own epoch
        if (epoch < installedEpoch || mode != Mode.NORMAL) return;
        // a member that crashed before a flush re-created this epoch number may still have traffic in flight
        if (!members.contains(from)) return;
        switch (msg) {
            case Proto.Data d -> { heard(from, d.heldThrough()); onData(from, d, now); }
            case Proto.Order o -> { heard(from, o.heldThrough()); onOrder(from, o); }
            case Proto.Ack a -> onAck(from, a);
            default -> throw new IllegalStateException();
        }
        deliverReady();
    }

    /**
     * A member of the installed epoch holds every slot through {@code held}: it said so in this epoch (an
     * ACK, or piggybacked on its DATA or ORDER), and a member's heldThrough never goes back within an epoch.
     */
    private void heard(String from, long held) {
        ackHeld.merge(from, held, Math::max);
    }

    private void onData(String from, Proto.Data d, long now) {
        MsgId id = new MsgId(from, d.seq());
        received.merge(from, d.seq(), Math::max);
        // only RELIABLE messages need the others' received vectors (their garbage collection); ordered ones go with their slots
        if (d.delivery() == Delivery.RELIABLE) receivedNews = true;
        Entry e = new Entry(id, d.delivery(), d.payload(), d.sites());
        hold(e);
        if (d.delivery() == Delivery.RELIABLE) {
            e.delivered = true;
            fx.reliable(e.message());
            return;
        }
        if (d.delivery() == Delivery.OPT_SAFE) {
            e.optDelivered = true;
            fx.optimistic(e.message());
        }
        if (self.equals(sequencer)) {
            pendingOrder.add(id);
            if (pendingOrder.size() >= cfg.maxOrderBatch()) flushOrders();
        }
        advanceHeld();
        deliverReady();
    }

    private void flushOrders() {
        if (pendingOrder.isEmpty()) return;
        long first = nextSlot;
        List<MsgId> ids = List.copyOf(pendingOrder);
        nextSlot += ids.size();
        pendingOrder.clear();
        assign(first, ids);
        // the ORDER says how far the sequencer holds after assigning these slots (it holds their data):
        // a member that receives it and holds them too has a majority of three at once
        Proto.Order o = new Proto.Order(installedEpoch, first, ids, heldThrough);
        toldHeld = heldThrough;
        fx.send(null, o);
    }

    private void onOrder(String from, Proto.Order o) {
        if (!from.equals(sequencer)) return;   // only the epoch's sequencer orders
        assign(o.firstSlot(), o.ids());
    }

    private void assign(long firstSlot, List<MsgId> ids) {
        long level = Levels.sequencer(installedEpoch);
        long s = firstSlot;
        for (MsgId id : ids) slots.put(s++, new Assign(id, level));
        advanceHeld();
    }

    private void onAck(String from, Proto.Ack a) {
        heard(from, a.heldThrough());
        ackReceived.put(from, a.received());
        stampFrom.merge(from, a.stamp(), Math::max);
        Long mine = a.echo().get(self);
        if (mine != null) echoedMine.merge(from, mine, Math::max);
    }

    /**
     * Until when (on this member's clock, the one passed as {@code now}) this member may take its
     * replica as current: no primary view without it can exist before then. Every other member of the
     * installed epoch echoed a stamp of ours sent at time s, so it heard from us at s or later and its
     * failure detector cannot suspect us before s plus its timeout; any member may start an exclusion,
     * hence the minimum over all of them. After a pause (SIGSTOP) or a partition the echoes stop, the
     * lease runs out, and traffic buffered from before cannot renew it (it echoes old stamps).
     * {@code Long.MIN_VALUE} outside the primary component.
     */
    public long leaseExpiry() {
        if (mode != Mode.NORMAL) return Long.MIN_VALUE;
        long oldest = Long.MAX_VALUE;
        for (String m : members) {
            if (m.equals(self)) continue;
            Long e = echoedMine.get(m);
            if (e == null) return Long.MIN_VALUE;
            oldest = Math.min(oldest, e);
        }
        return oldest == Long.MAX_VALUE ? Long.MAX_VALUE : oldest + cfg.leaseMs();
    }

    private void advanceHeld() {
        while (true) {
            Assign a = slots.get(heldThrough + 1);
            if (a == null) break;
            if (a.id != null && !held.containsKey(a.id)) break;
            heldThrough++;
        }
    }

    /**
     * The highest slot that a majority of the installed view's members (this one included) hold with
     * its data: a uniform delivery needs no more (see the class comment). What is dropped waits for
     * every member ({@link #stableThrough}), since a flush starts from the slowest continuing member.
     */
    private long majorityHeldThrough() {
        long[] held = new long[members.size()];
        int i = 0;
        for (String m : members) held[i++] = m.equals(self) ? heldThrough : ackHeld.getOrDefault(m, 0L);
        java.util.Arrays.sort(held);
        return held[held.length - (held.length / 2 + 1)];
    }

    private long stableThrough() {
        long min = heldThrough;
        for (String m : members) if (!m.equals(self)) min = Math.min(min, ackHeld.getOrDefault(m, 0L));
        return min;
    }

    private void deliverReady() {
        if (mode != Mode.NORMAL) return;
        long stable = -1;
        while (nextDeliver <= heldThrough) {
            Assign a = slots.get(nextDeliver);
            if (a.id != null) {
                Entry e = held.get(a.id);
                if (e.delivery.uniform()) {
                    if (stable < 0) stable = majorityHeldThrough();
                    if (nextDeliver > stable) break;
                }
                finalDelivery(e, nextDeliver);
            }
            nextDeliver++;
        }
    }

    /**
     * The post-step and the timer: sends the pending ORDER batch and a due acknowledgement, and drops what is
     * stable. An acknowledgement is due {@code ackIntervalMs} after the last one if it has news (a heldThrough
     * beyond what this member last multicast, in an ACK or piggybacked on a DATA or ORDER, or a RELIABLE
     * message received), and {@code heartbeatMs} after the last one in any case (it carries the lease stamps).
     */
    public void onTick(long now) {
        if (mode != Mode.NORMAL) return;
        if (self.equals(sequencer)) flushOrders();
        if (now >= ackDue()) {
            String to = ackTarget(now);
            receivedNews = false;
            toldHeld = heldThrough;
            lastAckAt = now;
            if (to == null) lastAllAckAt = now;
            fx.send(to, new Proto.Ack(installedEpoch, heldThrough, Map.copyOf(received), now, Map.copyOf(stampFrom)));
        }
        deliverReady();
        collectGarbage();
    }

    private long ackDue() {
        long due = lastAllAckAt + cfg.heartbeatMs();
        if (receivedNews || heldThrough > toldHeld) due = Math.min(due, lastAckAt + ackPacing());
        return due;
    }

    /** How long after the last ACK the next may go: {@code ackIntervalMs}, or for news that is only a hold {@link #holdAckInterval}. */
    private long ackPacing() { return receivedNews ? cfg.ackIntervalMs() : holdAckInterval(); }

    /** How much slower the third member of a view of three paces its ACKs whose only news is a hold (see {@link #holdAckInterval}). */
    static final int SECOND_ACKER_PACING = 10;

    /**
     * The pacing of an ACK whose only news is a hold. In a view of three the sequencer needs one other member's hold
     * for a SAFE delivery (its own and that one are a majority): the member after it in view order acknowledges at
     * {@code ackIntervalMs}, the third {@link #SECOND_ACKER_PACING} times slower. Under steady traffic that saves the
     * third's ACK nearly every time (its timer, its send, the sequencer's receive: a tenth of the group's CPU per
     * delivery on lan); while the first is slow or cut off the sequencer's SAFE deliveries wait for the third's
     * slower ACK, at most {@code ackIntervalMs * SECOND_ACKER_PACING} more, until the view excludes it. Every other
     * member's deliveries, and all safety, are unchanged: an ACK only tells what a member holds.
     */
    private long holdAckInterval() {
        if (members.size() != 3 || sequencer == null || self.equals(sequencer)) return cfg.ackIntervalMs();
        int s = members.indexOf(sequencer);
        boolean first = s < 0 || members.get((s + 1) % members.size()).equals(self);
        return first ? cfg.ackIntervalMs() : cfg.ackIntervalMs() * SECOND_ACKER_PACING;
    }

    /**
     * Who a due ACK goes to: every member (null), or only the sequencer. A SAFE slot needs the holds of a majority;
     * a member other than the sequencer counts its own and the sequencer's (every ORDER carries it), so in a view of
     * three or fewer, where two are a majority, only the sequencer waits for others' ACKs (for its own deliveries).
     * There an ACK whose only news is a hold goes to the sequencer alone: with three members one JGroups message
     * received instead of two. Heartbeats ({@code heartbeatMs} after the last ACK to all: the lease's stamps and
     * echoes, stability for garbage collection) and ACKs telling a RELIABLE message received (its garbage collection
     * needs every member's word) go to all.
     */
    private String ackTarget(long now) {
        if (receivedNews || now >= lastAllAckAt + cfg.heartbeatMs()) return null;
        if (members.size() > 3 || sequencer == null || self.equals(sequencer)) return null;
        return sequencer;
    }

    /**
     * When {@link #onTick} has something to do next, on the clock of {@code now}: {@code now} if it has now
     * (an ORDER batch waits, an acknowledgement is due), else the time the next acknowledgement or heartbeat
     * falls due; {@code Long.MAX_VALUE} if nothing is time-driven (outside an installed epoch: a flush has no
     * timeouts, it waits for messages and views). Valid until the next step (message, multicast, view, tick)
     * changes the state; a tick earlier than this sends and delivers nothing, provided {@code onTick} ran after
     * the last step, as the driver does. Pure: reads the state only.
     */
    public long nextDeadline(long now) {
        if (mode != Mode.NORMAL) return Long.MAX_VALUE;
        if (self.equals(sequencer) && !pendingOrder.isEmpty()) return now;
        return Math.max(now, ackDue());
    }

    /**
     * When acknowledgement pacing next lets an ACK go ({@code ackIntervalMs} after the last one), or
     * {@code Long.MAX_VALUE} outside an installed epoch: the {@link #nextDeadline} a step that brings news sets
     * while the pacing holds the ACK back. A driver that wakes then anyway (a tick with nothing due does
     * nothing) need not be woken by such a step. Pure.
     */
    public long ackPacingEnd() {
        return mode != Mode.NORMAL ? Long.MAX_VALUE : lastAckAt + ackPacing();
    }

    private void collectGarbage() {
        long stable = stableThrough();
        long limit = Math.min(nextDeliver, stable + 1);
        while (!slots.isEmpty() && slots.firstKey() < limit) {
            Assign a = slots.pollFirstEntry().getValue();
            if (a.id != null) held.remove(a.id);
        }
        // RELIABLE messages go once every member has received them
        // (only those: a scan of everything held, after every step, cost time in proportion to what a lagging member
        // keeps the others holding)
        if (!heldReliable.isEmpty() && ackReceived.size() >= members.size() - 1) {
            Iterator<MsgId> it = heldReliable.iterator();
            while (it.hasNext()) {
                MsgId id = it.next();
                if (!receivedByAll(id)) continue;
                it.remove();
                held.remove(id);
            }
        }
    }

    private boolean receivedByAll(MsgId id) {
        for (String m : members) {
            long r = m.equals(self) ? received.getOrDefault(id.sender(), 0L)
                    : ackReceived.getOrDefault(m, Map.of()).getOrDefault(id.sender(), 0L);
            if (r < id.seq()) return false;
        }
        return true;
    }

    // ------------------------------------------------------------------ view changes

    /** A new membership view from the membership service (JGroups GMS). */
    public void onView(long viewId, List<String> newMembers, long now) {
        if (viewId <= lastViewId) return;
        lastViewId = viewId;
        viewMembers = List.copyOf(newMembers);
        excludedReason = null;
        reports.clear();
        proposalAcks.clear();
        leaderProposal = null;
        waitingForHistory = false;
        if (!isMajority(newMembers)) {
            mode = Mode.NOT_PRIMARY;
            failQueued(notPrimaryReason());
            fx.view(new GcsView(viewId, installedEpoch, viewMembers, false, false, gsn + 1, null));
            return;
        }
        mode = Mode.FLUSHING;
        String leader = sequencerOf(newMembers);
        Proto.FlushState state = frozenState(viewId);
        if (leader.equals(self)) onFlushState(self, state, now);
        else fx.send(leader, state);
        List<Buffered> early = futureFlush.remove(viewId);
        futureFlush.headMap(viewId).clear();
        if (early != null) for (Buffered b : early) onMessage(b.from, b.msg, now);
    }

    private Proto.FlushState frozenState(long viewId) {
        List<Proto.Assignment> as = new ArrayList<>(slots.size());
        for (var e : slots.entrySet()) as.add(new Proto.Assignment(e.getKey(), e.getValue().id, e.getValue().level));
        List<Proto.Held> hs = new ArrayList<>(held.size());
        for (Entry e : held.values()) hs.add(e.report());
        return new Proto.FlushState(viewId, installed, members, mayBootstrap, acceptedEpoch, acceptedBase, acceptedMembers, nextDeliver, gsn,
                as, hs, Map.copyOf(received), sites, sitesGsn);
    }

    private void flushMessage(String from, Proto msg, long viewId, long now) {
        if (viewId > lastViewId) { futureFlush.computeIfAbsent(viewId, k -> new ArrayList<>()).add(new Buffered(from, msg)); return; }
        if (viewId < lastViewId || mode != Mode.FLUSHING) return;
        switch (msg) {
            case Proto.FlushState s -> onFlushState(from, s, now);
            case Proto.Proposal p -> onProposal(from, p);
            case Proto.ProposalAck a -> onProposalAck(from, now);
            case Proto.Commit c -> onCommit(from, now);
            default -> throw new IllegalStateException();
        }
    }

    private void onFlushState(String from, Proto.FlushState s, long now) {
        if (!sequencerOf(viewMembers).equals(self) || leaderProposal != null || waitingForHistory) return;
        reports.put(from, s);
        if (!reports.keySet().containsAll(viewMembers)) return;
        Map<String, Proto.FlushState> inView = new LinkedHashMap<>();
        for (String m : viewMembers) inView.put(m, reports.get(m));
        leaderProposal = FlushPlanner.plan(lastViewId, viewMembers, inView, self);
        if (leaderProposal == null) { waitingForHistory = true; return; }   // stays frozen until a view with the history
        fx.send(null, leaderProposal);
        onProposal(self, leaderProposal);
    }

    private void onProposal(String from, Proto.Proposal p) {
        if (!from.equals(sequencerOf(viewMembers))) return;
        boolean continuing = FlushPlanner.continuing(installed, acceptedEpoch, acceptedBase, p.baseEpoch());
        // diverged: from now on it reports no installed epoch, so no later flush takes it as continuing either
        if (continuing && contradicts(p)) { continuing = false; installed = Epoch.NONE; }
        if (!p.members().contains(self)) {
            // its site is not configured: it stays out of the new epoch. If it continues, it still
            // completes the old epoch's history (a removed site so learns of its removal); a joiner takes nothing.
            if (continuing) storePlan(p);
            acceptedAsJoiner = !continuing;
        } else if (continuing) {
            storePlan(p);
            acceptedEpoch = p.newEpoch();
            acceptedBase = p.baseEpoch();
            acceptedMembers = List.copyOf(p.members());
            acceptedAsJoiner = false;
        } else {
            // A joiner: it becomes a member of the proposed epoch right away, from its start, so that if
            // the plan commits elsewhere and the next view comes first, it still counts as continuing
            // that epoch. Its own old history is dropped now and can never come back as stale data.
            slots.clear();
            dropHeld();
            pendingOrder.clear();
            nextDeliver = p.startSlot();
            heldThrough = p.startSlot() - 1;
            gsn = p.gsnAtStart();
            // the configured sites go with the history it takes over (a new site learns them here)
            if (!p.sites().isEmpty()) { sites = List.copyOf(p.sites()); sitesGsn = p.sitesGsn(); }
            for (var e : ownPending.entrySet())
                fx.undeliverable(new MsgId(self, e.getKey()), e.getValue(), "member " + self + " rejoined the primary component without its earlier state");
            ownPending.clear();
            acceptedEpoch = p.newEpoch();
            acceptedBase = Epoch.NONE;   // continuing only if this very plan committed
            acceptedMembers = List.of();
            joinedPending = true;
            joinedVia = p;
            acceptedAsJoiner = true;
        }
        accepted = p;
        if (from.equals(self)) onProposalAck(self, 0);
        else fx.send(from, new Proto.ProposalAck(p.viewId()));
    }

    private void storePlan(Proto.Proposal p) {
        long level = Levels.plan(p.newEpoch().number());
        for (Proto.Assignment a : p.assignments()) slots.put(a.slot(), new Assign(a.id(), level));
        for (Proto.Held h : p.data()) if (!held.containsKey(h.id())) hold(new Entry(h.id(), h.delivery(), h.payload(), h.sites()));
        for (Proto.Held h : p.reliable()) {
            if (received.getOrDefault(h.id().sender(), 0L) < h.id().seq() && !held.containsKey(h.id()))
                hold(new Entry(h.id(), h.delivery(), h.payload(), h.sites()));
        }
    }

    private void hold(Entry e) {
        held.put(e.id, e);
        if (e.delivery == Delivery.RELIABLE) heldReliable.add(e.id);
    }

    private void dropHeld() {
        held.clear();
        heldReliable.clear();
    }

    /**
     * Whether the plan puts another message in a slot this member already delivered. Only agreed
     * delivery allows it (a sequencer delivers its order before anyone else holds it, and a flush
     * without it may decide that slot otherwise): the member then joins afresh rather than continue
     * a history it has already departed from.
     */
    private boolean contradicts(Proto.Proposal p) {
        for (Proto.Assignment a : p.assignments()) {
            if (a.slot() >= nextDeliver) break;
            Assign mine = slots.get(a.slot());
            if (mine != null && !java.util.Objects.equals(mine.id, a.id())) return true;
        }
        return false;
    }

    private void onProposalAck(String from, long now) {
        if (leaderProposal == null) return;
        proposalAcks.add(from);
        if (!proposalAcks.containsAll(viewMembers)) return;
        fx.send(null, new Proto.Commit(lastViewId));
        onCommit(self, now);
    }

    private void onCommit(String from, long now) {
        Proto.Proposal p = accepted;
        if (p == null || p.viewId() != lastViewId || !from.equals(sequencerOf(viewMembers))) return;
        boolean cont = !acceptedAsJoiner && FlushPlanner.continuing(installed, acceptedEpoch, acceptedBase, p.baseEpoch());
        boolean member = p.members().contains(self);
        if (!member && !cont) { exclude(p); return; }
        if (cont && joinedPending) {
            // it joined an epoch whose commit it missed and now continues from it: say where its history
            // starts before delivering anything of it
            Proto.Proposal j = joinedVia;
            fx.view(new GcsView(j.viewId(), j.newEpoch().number(), List.copyOf(j.members()), true, true, j.gsnAtStart() + 1, sequencerOf(j.members())));
            joinedPending = false;
        }
        boolean joined = (!cont || joinedPending) && p.baseEpoch().number() > 0;
        if (cont) {
            for (long s = nextDeliver; s < p.startSlot(); s++) {
                Assign a = slots.get(s);
                if (a == null) throw new IllegalStateException(self + ": plan of view " + p.viewId() + " lacks slot " + s);
                if (a.id == null) continue;
                Entry e = held.get(a.id);
                if (e == null) throw new IllegalStateException(self + ": plan of view " + p.viewId() + " lacks data of " + a.id);
                finalDelivery(e, s);
            }
            if (gsn != p.gsnAtStart())
                throw new IllegalStateException(self + ": GSN " + gsn + " after flush, plan says " + p.gsnAtStart());
            List<Proto.Held> rel = new ArrayList<>(p.reliable());
            rel.sort(Comparator.comparing(Proto.Held::id));
            for (Proto.Held h : rel) {
                if (received.getOrDefault(h.id().sender(), 0L) < h.id().seq()) {
                    received.put(h.id().sender(), h.id().seq());
                    fx.reliable(new GcsMessage(h.id(), h.delivery(), h.payload()));
                }
            }
        } else {
            gsn = p.gsnAtStart();   // a joiner (its old history went when it accepted the plan)
        }
        if (!member) { exclude(p); return; }
        // every member ends the flush with the planner's configured sites: it delivered the same changes
        if (!p.sites().isEmpty() && (!p.sites().equals(sites) || p.sitesGsn() != sitesGsn))
            throw new IllegalStateException(self + ": configured sites " + sites + " (GSN " + sitesGsn + ") after flush, plan says "
                    + p.sites() + " (GSN " + p.sitesGsn() + ")");
        install(p, joined, now);
    }

    /**
     * Left out of the epoch {@code p} creates: its site is not one of the configured sites (a site started
     * before its addition was ordered, or a removed one). It holds no history from here (it never counts as
     * continuing, nor bootstraps a group) and stays outside the primary component until a later view.
     */
    private void exclude(Proto.Proposal p) {
        excludedReason = "member " + self + " is not in the primary component: its site " + Members.siteOf(self)
                + " is not one of the configured sites " + p.sites();
        mode = Mode.NOT_PRIMARY;
        mayBootstrap = false;
        installed = Epoch.NONE;
        installedEpoch = 0;
        acceptedEpoch = Epoch.NONE;
        acceptedBase = Epoch.NONE;
        acceptedMembers = List.of();
        accepted = null;
        joinedPending = false;
        joinedVia = null;
        members = List.of();
        sequencer = null;
        slots.clear();
        dropHeld();
        pendingOrder.clear();
        futureEpoch.clear();
        for (var e : ownPending.entrySet()) fx.undeliverable(new MsgId(self, e.getKey()), e.getValue(), excludedReason);
        ownPending.clear();
        failQueued(excludedReason);
        reportSites();
        fx.view(new GcsView(p.viewId(), 0, viewMembers, false, false, gsn + 1, null));
    }

    private void install(Proto.Proposal p, boolean joined, long now) {
        mayBootstrap = false;
        joinedPending = false;
        joinedVia = null;
        installed = p.newEpoch();
        installedEpoch = installed.number();
        acceptedEpoch = Epoch.NONE;
        acceptedBase = Epoch.NONE;
        acceptedMembers = List.of();
        installedViewId = p.viewId();
        accepted = null;
        members = List.copyOf(p.members());
        stampFrom.keySet().retainAll(members);
        echoedMine.keySet().retainAll(members);
        lastAckAt = Long.MIN_VALUE / 2;   // a heartbeat at the next tick: the new members' leases start at once
        lastAllAckAt = Long.MIN_VALUE / 2;
        sequencer = sequencerOf(members);
        slots.clear();
        dropHeld();
        pendingOrder.clear();
        ackHeld.clear();
        ackReceived.clear();
        nextDeliver = p.startSlot();
        heldThrough = p.startSlot() - 1;
        nextSlot = p.startSlot();
        for (String m : members) ackHeld.put(m, heldThrough);
        mode = Mode.NORMAL;
        receivedNews = true;
        toldHeld = heldThrough;
        reports.clear();
        proposalAcks.clear();
        leaderProposal = null;
        reportSites();
        // the flush brought every member of this primary view to the same prefix: later primaries continue from it
        notYetUniform.clear();
        uniformGsn = gsn;
        fx.view(new GcsView(p.viewId(), installedEpoch, members, true, joined, gsn + 1, sequencer));
        // multicasts made during the flush go out now, in the new epoch
        while (!queued.isEmpty()) {
            Pending q = queued.poll();
            sendData(q.seq, q.delivery, q.payload, q.sites, now);
        }
        List<Buffered> replay = new ArrayList<>();
        Iterator<Buffered> it = futureEpoch.iterator();
        while (it.hasNext()) {
            Buffered b = it.next();
            long e = epochOf(b.msg);
            if (e <= installedEpoch) { it.remove(); if (e == installedEpoch) replay.add(b); }
        }
        for (Buffered b : replay) epochMessage(b.from, b.msg, installedEpoch, now);
        onTick(now);
    }

    private static long epochOf(Proto m) {
        return switch (m) {
            case Proto.Data d -> d.epoch();
            case Proto.Order o -> o.epoch();
            case Proto.Ack a -> a.epoch();
            default -> -1;
        };
    }

    /** Final delivery at the next GSN; a configuration change takes effect at exactly that GSN, before the application hears of it. */
    private void finalDelivery(Entry e, long slot) {
        e.delivered = true;
        ownDelivered(e.id);
        ++gsn;
        if (e.delivery.uniform()) {
            // a majority holds this slot, so (acknowledgements cover prefixes) every earlier one too
            notYetUniform.clear();
            uniformGsn = gsn;
        } else {
            notYetUniform.addLast(new long[] {slot, gsn});
            pruneUniform();
        }
        if (e.sites != null) {
            List<String> next = SiteSet.apply(sites, e.sites);
            if (next != null) { sites = next; sitesGsn = gsn; reportSites(); }
        }
        fx.ordered(e.message(), gsn, slot);
    }

    private void reportSites() {
        if (reportedSitesGsn == sitesGsn) return;
        reportedSitesGsn = sitesGsn;
        fx.sitesChanged(sites, sitesGsn);
    }

    private void ownDelivered(MsgId id) {
        if (id.sender().equals(self)) ownPending.remove(id.seq());
    }

    private void failQueued(String reason) {
        while (!queued.isEmpty()) {
            Pending q = queued.poll();
            fx.undeliverable(new MsgId(self, q.seq), q.delivery, reason);
        }
    }

    // ------------------------------------------------------------------ helpers

    /**
     * The members' own pre-check: whether it takes part in the flush. The leader decides with the set the
     * completed history ends with; a member that holds changes it has not delivered yet also counts under
     * the set they lead to, so that it does not stay away from a flush whose set it lags behind. Being
     * lenient here is safe: the leader's rule is the one that decides.
     */
    private boolean isMajority(List<String> ms) {
        if (SiteSet.majority(ms, sites)) return true;
        List<String> ahead = sites;
        for (var e : slots.tailMap(nextDeliver).entrySet()) {
            Entry h = e.getValue().id == null ? null : held.get(e.getValue().id);
            if (h == null || h.sites == null) continue;
            List<String> next = SiteSet.apply(ahead, h.sites);
            if (next != null) ahead = next;
        }
        return ahead != sites && SiteSet.majority(ms, ahead);
    }

    private static Set<String> sitesOf(List<String> ms) {
        Set<String> s = new TreeSet<>();
        for (String m : ms) s.add(Members.siteOf(m));
        return s;
    }

    /**
     * The sequencer of a view (a flush's leader) or of an epoch: the first member of the first listed sequencer
     * site that has one in {@code ms}, else the first member (JGroups' view order, the same everywhere). A pure
     * function of the members and the static setting, never of the configured sites: members may differ on
     * those while a change is delivered at some and not yet at others, and must still name one leader. So a
     * listed site that was removed may lead a flush while its member is still in the view; it takes no part in
     * the epoch it plans (the plan leaves members of unconfigured sites out), and an epoch's sequencer is taken
     * from the epoch's members, so it never orders the new epoch's messages.
     */
    public String sequencerOf(List<String> ms) {
        for (String site : sequencerSites)
            for (String m : ms) if (Members.siteOf(m).equals(site)) return m;
        return ms.get(0);
    }

    @Override public String toString() {
        return self + "[" + mode + " epoch=" + installedEpoch + " view=" + lastViewId + " members=" + members
                + " next=" + nextDeliver + " heldThrough=" + heldThrough + " told=" + toldHeld + " stable=" + (mode == Mode.NORMAL ? stableThrough() : -1)
                + " acks=" + ackHeld + " gsn=" + gsn + " seq=" + sequencer + " held=" + held.size() + " slots=" + slots.size()
                + " queued=" + queued.size() + " future=" + futureEpoch.size() + " pendingOrder=" + pendingOrder.size()
                + (waitingForHistory ? " waiting-for-history" : "") + "]";
    }
}
