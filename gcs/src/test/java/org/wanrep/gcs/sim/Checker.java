package org.wanrep.gcs.sim;

import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.GcsMessage;
import org.wanrep.gcs.GcsView;
import org.wanrep.gcs.MsgId;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Watches every callback of every member and fails at the first violated invariant:
 * gap-free GSNs, no duplicates, optimistic before final and at most once, one message per slot
 * wherever a uniform delivery is involved, and (in {@link #checkEnd}) agreement and completeness
 * among the members that survive.
 */
public final class Checker {
    static final class Member {
        final String name;
        long nextGsn = -1;                       // -1 until the first primary view
        boolean crashed, joined;
        int joins;                               // times it entered the primary component afresh
        final List<MsgId> ordered = new ArrayList<>();
        final Map<Long, MsgId> byGsn = new LinkedHashMap<>();
        final Set<MsgId> orderedSet = new HashSet<>();
        final Set<MsgId> opt = new HashSet<>();
        final Set<MsgId> reliable = new HashSet<>();
        final Set<MsgId> undeliverable = new HashSet<>();
        long firstGsn = -1;
        List<String> sites;                      // the configured sites it last reported (null: the initial ones)
        Member(String name) { this.name = name; }
    }

    final Map<String, Member> members = new LinkedHashMap<>();
    final Map<MsgId, Delivery> sent = new HashMap<>();
    private final Map<MsgId, Integer> sentAtJoins = new HashMap<>();
    /** slot -> (message, uniform?) as first delivered anywhere. */
    private final Map<Long, MsgId> slotMsg = new HashMap<>();
    private final Map<Long, Boolean> slotUniform = new HashMap<>();
    private final Map<MsgId, Long> uniformDelivered = new HashMap<>();   // uniform msg -> slot
    long deliveries = 0;

    void member(String name) { members.put(name, new Member(name)); }
    void crashed(String name) { members.get(name).crashed = true; }
    void sent(String member, MsgId id, Delivery d) { sent.put(id, d); sentAtJoins.put(id, members.get(member).joins); }
    void step(Simulator sim) { /* invariants are checked as events arrive */ }

    /** GSN of each configuration change -> the sites it set, as first reported anywhere. */
    final Map<Long, List<String>> sitesAt = new HashMap<>();

    /** Every member switches to the same configured sites at the same GSN. */
    void sitesChanged(String name, List<String> sites, long gsn) {
        List<String> prev = sitesAt.putIfAbsent(gsn, List.copyOf(sites));
        if (prev != null && !prev.equals(sites)) fail(name + ": configured sites " + sites + " at GSN " + gsn + ", elsewhere " + prev);
        members.get(name).sites = List.copyOf(sites);
    }

    private static void fail(String msg) { throw new AssertionError(msg); }

    /** Members of the latest primary view installed anywhere. */
    List<String> lastPrimary = List.of();
    private long lastPrimaryEpoch = 0;

    /** Per primary epoch: its members and the members that installed it. */
    private final Map<Long, List<String>> epochMembers = new HashMap<>();
    private final Map<Long, Set<String>> installers = new HashMap<>();

    /**
     * Whether the protocol promises progress to these survivors: a majority of the members of the
     * latest primary epoch that some survivor installed must have installed it and survived. A
     * survivor that only accepted a plan cannot know whether it was installed elsewhere (its commit
     * did not arrive), so an epoch installed by crashed members only does not count for them.
     */
    boolean progressExpected(List<String> survivors) {
        for (long e = lastPrimaryEpoch; e >= 1; e--) {
            Set<String> inst = installers.get(e);
            if (inst == null) continue;
            long alive = inst.stream().filter(survivors::contains).count();
            if (alive > 0) return alive * 2 > epochMembers.get(e).size();
        }
        return false;
    }

    void view(String name, GcsView v) {
        Member m = members.get(name);
        if (!v.primary()) return;
        List<String> known = epochMembers.putIfAbsent(v.epoch(), v.members());
        // one primary per epoch number: two different member sets would be two primary components
        if (known != null && !known.equals(v.members()))
            fail(name + ": installed epoch " + v.epoch() + " with " + v.members() + ", elsewhere with " + known);
        installers.computeIfAbsent(v.epoch(), k -> new HashSet<>()).add(name);
        if (v.epoch() > lastPrimaryEpoch) { lastPrimaryEpoch = v.epoch(); lastPrimary = v.members(); }
        if (m.nextGsn < 0 || v.joined()) {
            if (v.joined()) { m.joined = true; m.joins++; }
            m.nextGsn = v.firstGsn();
            if (m.firstGsn < 0 || v.joined()) m.firstGsn = v.firstGsn();
        } else if (v.firstGsn() != m.nextGsn) {
            fail(name + ": view " + v + " starts at GSN " + v.firstGsn() + " but next GSN is " + m.nextGsn);
        }
    }

    void optimistic(String name, GcsMessage msg) {
        Member m = members.get(name);
        if (msg.delivery() != Delivery.OPT_SAFE) fail(name + ": optimistic delivery of " + msg.delivery() + " " + msg.id());
        if (!m.opt.add(msg.id())) fail(name + ": optimistic delivery twice of " + msg.id());
        if (m.orderedSet.contains(msg.id())) fail(name + ": optimistic delivery after final of " + msg.id());
    }

    void ordered(String name, GcsMessage msg, long gsn, long slot) {
        Member m = members.get(name);
        deliveries++;
        if (!msg.delivery().ordered()) fail(name + ": final delivery of RELIABLE " + msg.id());
        // a member that accepted a group's first plan but missed its commit gets that epoch's
        // messages in the next flush, before its first view: they start the history at GSN 1
        if (m.nextGsn < 0) { m.nextGsn = 1; m.firstGsn = 1; }
        if (gsn != m.nextGsn) fail(name + ": GSN gap: delivered " + msg.id() + " at GSN " + gsn + ", expected " + m.nextGsn);
        m.nextGsn++;
        if (!m.orderedSet.add(msg.id())) fail(name + ": duplicate final delivery of " + msg.id());
        m.ordered.add(msg.id());
        m.byGsn.put(gsn, msg.id());
        boolean uniform = msg.delivery().uniform();
        MsgId prev = slotMsg.get(slot);
        if (prev == null) { slotMsg.put(slot, msg.id()); slotUniform.put(slot, uniform); }
        else if (!prev.equals(msg.id()) && uniform && slotUniform.get(slot))
            fail(name + ": slot " + slot + " holds " + msg.id() + " here but " + prev + " elsewhere (both uniform)");
        // (an AGREED delivery by a member that then leaves the primary component may differ: not uniform)
        if (uniform) {
            Long s = uniformDelivered.putIfAbsent(msg.id(), slot);
            if (s != null && s != slot) fail(name + ": uniform message " + msg.id() + " at slot " + slot + " and at slot " + s);
        }
    }

    void reliable(String name, GcsMessage msg) {
        Member m = members.get(name);
        if (msg.delivery() != Delivery.RELIABLE) fail(name + ": reliable delivery of " + msg.delivery());
        if (!m.reliable.add(msg.id())) fail(name + ": duplicate reliable delivery of " + msg.id());
    }

    void undeliverable(String name, MsgId id) {
        Member m = members.get(name);
        if (m.orderedSet.contains(id)) fail(name + ": " + id + " declared undeliverable after its delivery");
        m.undeliverable.add(id);
    }

    /**
     * After healing and quiescence: every surviving member that never rejoined afresh delivered the
     * same sequence; joiners agree from their first GSN on; every message a survivor sent and was not
     * told was lost is delivered; every uniform message delivered anywhere is delivered by survivors;
     * every optimistic delivery at a survivor was followed by its final delivery.
     */
    void checkEnd(List<String> survivors) {
        List<Member> ss = survivors.stream().map(members::get).toList();
        Member ref = null;
        for (Member m : ss) if (ref == null || (ref.joined && !m.joined) || (ref.joined == m.joined && m.nextGsn > ref.nextGsn)) ref = m;
        if (ref == null) return;
        for (Member m : ss) {
            if (m.nextGsn != ref.nextGsn) fail("after quiescence " + m.name + " is at GSN " + m.nextGsn + ", " + ref.name + " at " + ref.nextGsn);
            for (var e : m.byGsn.entrySet()) {
                // a joiner's deliveries before it rejoined belong to a history it gave up
                if (m.joined && e.getKey() < m.firstGsn || ref.joined && e.getKey() < ref.firstGsn) continue;
                MsgId r = ref.byGsn.get(e.getKey());
                if (r != null && !r.equals(e.getValue()))
                    fail("GSN " + e.getKey() + ": " + m.name + " delivered " + e.getValue() + ", " + ref.name + " delivered " + r);
            }
        }
        Set<MsgId> all = new HashSet<>();
        for (Member m : ss)
            for (var e : m.byGsn.entrySet()) if (!m.joined || e.getKey() >= m.firstGsn) all.add(e.getValue());
        for (Member m : ss) {
            for (MsgId id : m.opt)
                if (!m.orderedSet.contains(id) && !m.joined) fail(m.name + ": optimistic delivery of " + id + " never became final");
            if (m.joined) continue;
            for (MsgId id : all)
                if (!m.orderedSet.contains(id)) fail(m.name + " never delivered " + id + " which another survivor delivered");
            for (MsgId id : uniformDelivered.keySet())
                if (!m.orderedSet.contains(id)) fail(m.name + " never delivered uniform message " + id + " delivered elsewhere");
        }
        for (var e : sent.entrySet()) {
            Member sender = members.get(e.getKey().sender());
            if (!survivors.contains(sender.name) || sender.undeliverable.contains(e.getKey())) continue;
            // a sender that later rejoined afresh lost what only its old component knew (RELIABLE is not uniform)
            if (sentAtJoins.get(e.getKey()) != sender.joins) continue;
            if (e.getValue() == Delivery.RELIABLE) {
                for (Member m : ss) if (!m.joined && !m.reliable.contains(e.getKey()))
                    fail(m.name + " never received RELIABLE " + e.getKey() + " from surviving " + sender.name);
            } else if (!sender.orderedSet.contains(e.getKey())) {
                fail(sender.name + " sent " + e.getKey() + " (" + e.getValue() + "), never delivered nor declared undeliverable");
            }
        }
        // RELIABLE: agreement among continuous survivors
        Set<MsgId> rel = new HashSet<>();
        for (Member m : ss) if (!m.joined) rel.addAll(m.reliable);
        for (Member m : ss) if (!m.joined)
            for (MsgId id : rel) if (!m.reliable.contains(id)) fail(m.name + " lacks RELIABLE " + id + " another survivor delivered");
    }
}
