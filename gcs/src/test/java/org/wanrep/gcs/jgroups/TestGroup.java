package org.wanrep.gcs.jgroups;

import org.jgroups.JChannel;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.GcsListener;
import org.wanrep.gcs.GcsMessage;
import org.wanrep.gcs.GcsView;
import org.wanrep.gcs.MsgId;
import org.wanrep.gcs.wan.LatencyMatrix;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

import static org.assertj.core.api.Assertions.assertThat;

/** Real JGroups members on loopback, one per site, each recording its deliveries and checking them as they come. */
final class TestGroup implements AutoCloseable {
    static final class Recorder implements GcsListener {
        final String site;
        final List<MsgId> ordered = Collections.synchronizedList(new ArrayList<>());
        final Set<MsgId> opt = ConcurrentHashMap.newKeySet();
        final Set<MsgId> reliable = ConcurrentHashMap.newKeySet();
        final Set<MsgId> undeliverable = ConcurrentHashMap.newKeySet();
        final Map<MsgId, Long> optAt = new ConcurrentHashMap<>(), finalAt = new ConcurrentHashMap<>();
        final List<String> errors = Collections.synchronizedList(new ArrayList<>());
        volatile long nextGsn = -1;
        volatile GcsView view;

        Recorder(String site) { this.site = site; }

        @Override public void optimistic(GcsMessage m) {
            optAt.put(m.id(), System.nanoTime());
            if (!opt.add(m.id())) errors.add(site + ": optimistic twice " + m.id());
            if (finalAt.containsKey(m.id())) errors.add(site + ": optimistic after final " + m.id());
        }
        @Override public void ordered(GcsMessage m, long gsn) {
            finalAt.put(m.id(), System.nanoTime());
            if (nextGsn < 0) nextGsn = 1;   // see GcsListener.ordered
            if (gsn != nextGsn) errors.add(site + ": GSN " + gsn + " expected " + nextGsn + " for " + m.id());
            nextGsn = gsn + 1;
            if (ordered.contains(m.id())) errors.add(site + ": duplicate " + m.id());
            ordered.add(m.id());
        }
        @Override public void reliable(GcsMessage m) {
            if (!reliable.add(m.id())) errors.add(site + ": duplicate reliable " + m.id());
        }
        @Override public void viewChanged(GcsView v) {
            view = v;
            if (!v.primary()) return;
            if (nextGsn < 0 || v.joined()) nextGsn = v.firstGsn();
            else if (v.firstGsn() != nextGsn) errors.add(site + ": view starts at " + v.firstGsn() + " expected " + nextGsn);
        }
        @Override public void undeliverable(MsgId id, Delivery d, String reason) { undeliverable.add(id); }
    }

    final List<String> sites;
    final List<Integer> ports;
    final Map<String, JGroupsGcs> members = new LinkedHashMap<>();
    final Map<String, Recorder> recorders = new LinkedHashMap<>();
    final String cluster = "wanrep-test-" + System.nanoTime();
    final LatencyMatrix matrix;

    TestGroup(List<String> sites, LatencyMatrix matrix) {
        this.sites = sites;
        this.matrix = matrix;
        this.ports = GcsSettings.freePorts(sites.size());
    }

    TestGroup start(BiConsumer<String, JChannel> customize) throws Exception {
        return start(customize, (s, r) -> r);
    }

    /** As {@link #start(BiConsumer)}; {@code listener} may put a listener of its own around a site's recorder. */
    TestGroup start(BiConsumer<String, JChannel> customize, java.util.function.BiFunction<String, Recorder, GcsListener> listener) throws Exception {
        for (String s : sites) {
            Recorder r = new Recorder(s);
            recorders.put(s, r);
            members.put(s, JGroupsGcs.start(GcsSettings.loopback(cluster, s, sites, ports, matrix), listener.apply(s, r),
                    ch -> { if (customize != null) customize.accept(s, ch); }));
        }
        for (JGroupsGcs g : members.values()) g.awaitPrimary(sites.size(), Duration.ofSeconds(30));
        return this;
    }

    JGroupsGcs member(String site) { return members.get(site); }

    /** A stack customizer that puts a DISCARD right above TCP at every member and hands it out by site. */
    static BiConsumer<String, JChannel> discardAboveTransport(Map<String, org.jgroups.protocols.DISCARD> into) {
        return (site, ch) -> {
            org.jgroups.protocols.DISCARD d = new org.jgroups.protocols.DISCARD();
            into.put(site, d);
            try {
                ch.getProtocolStack().insertProtocol(d, org.jgroups.stack.ProtocolStack.Position.ABOVE, org.jgroups.protocols.TCP.class);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
    }

    void crash(String site) { members.get(site).crash(); }

    List<String> alive() {
        List<String> out = new ArrayList<>();
        for (var e : members.entrySet()) if (!e.getValue().channel().isClosed()) out.add(e.getKey());
        return out;
    }

    /** Waits until every listed member has delivered at least n ordered messages. */
    void awaitOrdered(List<String> who, int n, Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < end) {
            boolean ok = true;
            for (String s : who) ok &= recorders.get(s).ordered.size() >= n;
            if (ok) return;
            Thread.sleep(10);
        }
        StringBuilder b = new StringBuilder();
        for (String s : who) b.append(s).append('=').append(recorders.get(s).ordered.size()).append(' ').append(members.get(s)).append("; ");
        throw new AssertionError("not all delivered " + n + " within " + timeout + ": " + b);
    }

    /** Waits until every listed member has a view that satisfies the predicate. */
    void awaitView(List<String> who, java.util.function.Predicate<GcsView> p, Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < end) {
            boolean ok = true;
            for (String s : who) { GcsView v = members.get(s).view(); ok &= v != null && p.test(v); }
            if (ok) return;
            Thread.sleep(10);
        }
        throw new AssertionError("views not as expected after " + timeout + ":" + states(who));
    }

    /** Waits until the listed members' deliveries stop changing and match. */
    void awaitAgreement(List<String> who, Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < end) {
            List<MsgId> ref = List.copyOf(recorders.get(who.get(0)).ordered);
            boolean same = true;
            for (String s : who) same &= List.copyOf(recorders.get(s).ordered).equals(ref);
            if (same) {
                Thread.sleep(300);
                boolean still = List.copyOf(recorders.get(who.get(0)).ordered).equals(ref);
                if (still) return;
            }
            Thread.sleep(20);
        }
    }

    /** Survivors: no errors recorded, identical sequences, every message a survivor delivered is delivered by all. */
    String states(List<String> who) {
        StringBuilder b = new StringBuilder();
        for (String s : who) b.append("\n  ").append(members.get(s)).append(" delivered=").append(recorders.get(s).ordered.size());
        return b.toString();
    }

    void checkSurvivors(List<String> who) {
        for (String s : who) assertThat(recorders.get(s).errors).as("errors at " + s).isEmpty();
        List<MsgId> ref = List.copyOf(recorders.get(who.get(0)).ordered);
        for (String s : who) assertThat(List.copyOf(recorders.get(s).ordered)).as("sequence at " + s + " vs " + who.get(0)).isEqualTo(ref);
        assertThat(new HashSet<>(ref)).hasSize(ref.size());
        // RELIABLE messages of the old view are completed by the flush too (virtual synchrony)
        for (String s : who)
            assertThat(Set.copyOf(recorders.get(s).reliable)).as("RELIABLE at " + s + " vs " + who.get(0))
                    .isEqualTo(Set.copyOf(recorders.get(who.get(0)).reliable));
        for (String s : who)
            for (MsgId id : recorders.get(s).opt)
                assertThat(recorders.get(s).finalAt).as(s + ": optimistic " + id + " never final" + states(who)).containsKey(id);
    }

    @Override public void close() {
        for (JGroupsGcs g : members.values()) g.close();
    }
}
