package org.wanrep.gcs.core;

import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.MsgId;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The flush leader's decision, as a pure function of the members' frozen states.
 *
 * <p>Continuing members are those that installed the latest primary epoch M (or accepted the plan
 * that created it); the others join afresh. From the continuing members' reports the plan takes
 * every slot assignment (the highest-ranked where two disagree), walks the slots from the lowest
 * undelivered one, skips a slot whose data no continuing member holds (then none of them delivered
 * it), appends the ordered messages nobody had ordered yet by (sender, seq), and completes the
 * RELIABLE messages of the epoch. Everything a continuing member delivered is in its report, so
 * the plan extends every continuing member's delivered sequence.
 */
public final class FlushPlanner {
    private FlushPlanner() {}

    /** Whether a member with this frozen state continues from base epoch {@code base}. */
    public static boolean continuing(Epoch installed, Epoch accepted, Epoch acceptedBase, Epoch base) {
        return installed.equals(base) || accepted.equals(base) || acceptedBase.equals(base) && !accepted.equals(Epoch.NONE);
    }

    static boolean continuing(Proto.FlushState s, Epoch base) {
        return continuing(s.installedEpoch(), s.acceptedEpoch(), s.acceptedBase(), base);
    }

    /**
     * Whether an epoch some member accepted (but did not install) may have been installed by members
     * that are gone: a plan commits only when every member of its view accepted it, so a present
     * member of that view which never accepted it (its accepted and installed epochs are older)
     * proves it did not, and so does its leader being here without having installed it.
     */
    /** Whether the members not here are a majority of {@code members}. */
    static boolean absentMajority(List<String> members, Map<String, Proto.FlushState> reports) {
        int absent = 0;
        for (String m : members) if (!reports.containsKey(m)) absent++;
        return absent * 2 > members.size();
    }

    static boolean mayHaveCommitted(Epoch e, List<String> members, Map<String, Proto.FlushState> reports) {
        // its leader installs the moment it commits: a leader still here without it never committed it (unless the
        // leader's own site was not configured, so that it stayed outside the epoch it led)
        Proto.FlushState leader = members.contains(e.leader()) ? reports.get(e.leader()) : null;
        if (leader != null && leader.installedEpoch().compareTo(e) < 0) return false;
        for (String m : members) {
            Proto.FlushState r = reports.get(m);
            if (r != null && r.acceptedEpoch().compareTo(e) < 0 && r.installedEpoch().compareTo(e) < 0) return false;
        }
        return true;
    }

    /**
     * The plan, or null when this view must not become primary: the history would be incomplete
     * because the continuing members are not a majority of the last primary view (dynamic linear
     * voting: a later primary could exist without them), or because nobody has history and some
     * member is a new incarnation of a running group, not part of a fresh start.
     */
    public static Proto.Proposal plan(long viewId, List<String> members, Map<String, Proto.FlushState> reports) {
        return plan(viewId, members, reports, members.isEmpty() ? "" : members.get(0));
    }

    /**
     * As above, by {@code leader}: the member that proposes it and installs it the moment it commits (the
     * sequencer of the view, not necessarily its first member: a restarted sequencer site's member comes
     * last). {@link #mayHaveCommitted} relies on the epoch naming its real leader.
     */
    public static Proto.Proposal plan(long viewId, List<String> members, Map<String, Proto.FlushState> reports, String leader) {
        // the base is the latest epoch known to be installed: installed here, or the base of a plan
        // accepted here (a leader proposes from the latest installed epoch among its reports)
        Epoch base = Epoch.NONE;
        long number = 0;
        for (Proto.FlushState s : reports.values()) {
            base = Epoch.max(base, Epoch.max(s.installedEpoch(), s.acceptedBase()));
            number = Math.max(number, Math.max(s.installedEpoch().number(), s.acceptedEpoch().number()));
        }
        Epoch newEpoch = new Epoch(number + 1, viewId, leader);
        List<Proto.FlushState> cont = new ArrayList<>();
        List<String> baseMembers = List.of();
        for (Proto.FlushState s : reports.values()) {
            if (continuing(s, base)) cont.add(s);
            if (s.installedEpoch().equals(base) && base.number() > 0) baseMembers = s.installedMembers();
        }
        if (base.number() > 0 && baseMembers.isEmpty())   // installed elsewhere only: its members as accepted here
            for (Proto.FlushState s : reports.values()) if (s.acceptedEpoch().equals(base)) baseMembers = s.acceptedMembers();
        if (base.number() > 0 && baseMembers.isEmpty()) return null;
        // a later plan accepted here may have committed elsewhere; if its absent members are a
        // majority of it, they could go on from it without us: wait rather than risk two primaries
        for (Proto.FlushState s : reports.values())
            if (s.acceptedEpoch().compareTo(base) > 0 && !s.acceptedMembers().isEmpty() && s.acceptedBase().number() > 0
                    && mayHaveCommitted(s.acceptedEpoch(), s.acceptedMembers(), reports)
                    && absentMajority(s.acceptedMembers(), reports)) return null;
        if (base.number() == 0) {
            for (Proto.FlushState s : reports.values()) if (!s.mayBootstrap()) return null;
        } else {
            int present = 0;
            for (Map.Entry<String, Proto.FlushState> e : reports.entrySet()) {
                Proto.FlushState s = e.getValue();
                if (baseMembers.contains(e.getKey()) && continuing(s, base)) present++;
            }
            if (present * 2 <= baseMembers.size()) return null;
        }

        // union of assignments, highest level wins
        TreeMap<Long, Proto.Assignment> assign = new TreeMap<>();
        Map<MsgId, Proto.Held> data = new HashMap<>();
        Map<MsgId, Integer> holders = new HashMap<>();
        long fromSlot = Long.MAX_VALUE, gsnBefore = 0;
        for (Proto.FlushState s : cont) {
            // A plan this member accepted that provably never committed was delivered by nobody: its
            // assignments rank below every other authority. Otherwise they would override what the
            // sequencer assigned and may already have delivered (agreed delivery), and that member
            // would get the same message again in another slot.
            long uncommitted = s.acceptedEpoch().number() > 0 && !s.acceptedEpoch().equals(s.installedEpoch())
                    && !mayHaveCommitted(s.acceptedEpoch(), s.acceptedMembers(), reports)
                    ? Levels.plan(s.acceptedEpoch().number()) : -1;
            for (Proto.Assignment a : s.assignments()) {
                if (a.level() == uncommitted) a = new Proto.Assignment(a.slot(), a.id(), 0);
                Proto.Assignment cur = assign.get(a.slot());
                if (cur == null || a.level() > cur.level()) assign.put(a.slot(), a);
            }
            for (Proto.Held h : s.held()) {
                data.putIfAbsent(h.id(), h);
                holders.merge(h.id(), 1, Integer::sum);
            }
            if (s.nextDeliver() < fromSlot) { fromSlot = s.nextDeliver(); gsnBefore = s.gsn(); }
        }
        if (cont.isEmpty()) { fromSlot = 1; gsnBefore = 0; }

        // The configured sites after the completed history: those of the continuing member that delivered
        // the latest change, then the changes the plan delivers after it. Every member of the new epoch
        // ends its flush with exactly this set, so the quorum below is the one all of them apply from here.
        Proto.FlushState cfgFrom = null;
        for (Proto.FlushState s : cont.isEmpty() ? reports.values() : cont)
            if (!s.sites().isEmpty() && (cfgFrom == null || s.sitesGsn() > cfgFrom.sitesGsn())) cfgFrom = s;
        List<String> sites = cfgFrom == null ? List.of() : cfgFrom.sites();
        long sitesGsn = cfgFrom == null ? 0 : cfgFrom.sitesGsn();

        long level = Levels.plan(newEpoch.number());
        List<Proto.Assignment> plan = new ArrayList<>();
        List<Proto.Held> ship = new ArrayList<>();
        Set<MsgId> assigned = new HashSet<>();
        // one slot per message: where authorities put it in two slots, the higher-ranked (then the earlier) one
        Map<MsgId, Proto.Assignment> placed = new HashMap<>();
        for (Proto.Assignment a : assign.values()) {
            if (a.id() == null) continue;
            assigned.add(a.id());
            placed.merge(a.id(), a, (x, y) -> y.level() > x.level() ? y : x);
        }
        long slot = fromSlot, gsn = gsnBefore;
        long end = assign.isEmpty() ? fromSlot - 1 : Math.max(fromSlot - 1, assign.lastKey());
        for (; slot <= end; slot++) {
            Proto.Assignment a = assign.get(slot);
            MsgId id = a == null ? null : a.id();
            if (id != null && placed.get(id) != a) id = null;        // it goes in its other slot
            if (id != null && !data.containsKey(id)) id = null;   // lost with its holders: nobody continuing delivered it
            plan.add(new Proto.Assignment(slot, id, level));
            if (id != null) {
                gsn++;
                if (gsn > sitesGsn && !sites.isEmpty()) {
                    List<String> next = SiteSet.apply(sites, data.get(id).sites());
                    if (next != null) { sites = next; sitesGsn = gsn; }
                }
                if (holders.getOrDefault(id, 0) < cont.size()) ship.add(data.get(id));
            }
        }
        List<Proto.Held> unordered = new ArrayList<>();
        for (Proto.Held h : data.values())
            if (h.delivery().ordered() && !assigned.contains(h.id())) unordered.add(h);
        unordered.sort(Comparator.comparing(Proto.Held::id));
        for (Proto.Held h : unordered) {
            plan.add(new Proto.Assignment(slot++, h.id(), level));
            gsn++;
            if (gsn > sitesGsn && !sites.isEmpty()) {
                List<String> next = SiteSet.apply(sites, h.sites());
                if (next != null) { sites = next; sitesGsn = gsn; }
            }
            if (holders.getOrDefault(h.id(), 0) < cont.size()) ship.add(h);
        }
        // RELIABLE messages some continuing member has not received yet
        List<Proto.Held> reliable = new ArrayList<>();
        for (Proto.Held h : data.values()) {
            if (h.delivery() != Delivery.RELIABLE) continue;
            for (Proto.FlushState s : cont) {
                if (s.received().getOrDefault(h.id().sender(), 0L) < h.id().seq()) { reliable.add(h); break; }
            }
        }
        reliable.sort(Comparator.comparing(Proto.Held::id));
        List<String> epochMembers = List.copyOf(members);
        if (!sites.isEmpty()) {
            // Quorum under the set in force after the history: a majority of the configured sites (the
            // members' own pre-check at the view used the set each had delivered so far, which may lag).
            if (!SiteSet.majority(members, sites)) return null;
            // Members of sites not configured (added but not yet ordered, or removed) stay outside the
            // epoch: as members they would count in the next flush's majority of this epoch (dynamic
            // linear voting) without counting in the configured one, and could make both unreachable.
            List<String> in = new ArrayList<>();
            for (String m : members) if (sites.contains(org.wanrep.gcs.Members.siteOf(m))) in.add(m);
            epochMembers = List.copyOf(in);
        }
        return new Proto.Proposal(viewId, newEpoch, base, epochMembers, fromSlot, slot, gsn, plan, ship, reliable, sites, sitesGsn);
    }
}
