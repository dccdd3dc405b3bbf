package org.wanrep.gcs.sim;

import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.GcsListener;
import org.wanrep.gcs.GcsMessage;
import org.wanrep.gcs.GcsView;
import org.wanrep.gcs.Members;
import org.wanrep.gcs.MsgId;
import org.wanrep.gcs.NotPrimaryException;
import org.wanrep.gcs.core.Codec;
import org.wanrep.gcs.core.CoreConfig;
import org.wanrep.gcs.core.Effects;
import org.wanrep.gcs.core.Proto;
import org.wanrep.gcs.core.TotalOrderCore;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.Set;

/**
 * A single-threaded, seeded, virtual-time world for {@link TotalOrderCore}: a network that is
 * reliable and FIFO per link within a view (as JGroups NAKACK2/UNICAST3 are), with random delays that
 * reorder traffic between senders; crashes that cut each outgoing link of the victim at a random
 * point of its in-flight suffix; partitions; restarts as new incarnations; and a membership service
 * that installs views at each member at its own time. The {@link Checker} sees every delivery.
 *
 * <p>Other modules drive their own listeners through it (the test-jar): {@link #listen} attaches a
 * {@link GcsListener} to a member, which then gets every callback after the checker;
 * {@link #send} multicasts as {@code Gcs.multicast} does (callbacks run as their own events, so a listener may multicast); {@link #schedule} puts the application's own
 * events (a database answering, a client's next request) into the same virtual time.
 */
public final class Simulator {
    private static final int TICK_MS = 2;

    final Random rnd;
    final CoreConfig cfg;
    final Checker checker;
    long now = 0;
    private long eventSeq = 0;
    private long viewCounter = 0;
    private final PriorityQueue<Event> events = new PriorityQueue<>();

    /** All members ever, in join order. */
    final Map<String, Node> nodes = new LinkedHashMap<>();
    /** Partition label per member; members talk only within a label. */
    final Map<String, Integer> partition = new HashMap<>();
    private final Map<String, Integer> incarnations = new HashMap<>();
    private final Map<String, GcsListener> listeners = new HashMap<>();
    int maxDelayMs = 30;
    boolean encode = true;

    private abstract static class Event implements Comparable<Event> {
        long time, seq;
        abstract void run();
        public int compareTo(Event o) { return time != o.time ? Long.compare(time, o.time) : Long.compare(seq, o.seq); }
    }

    final class Node implements Effects {
        final String name;
        final TotalOrderCore core;
        boolean alive = true;
        List<String> view = List.of();
        long viewId = -1;
        final Map<String, Long> linkLast = new HashMap<>();        // FIFO per outgoing link
        final Map<String, List<Event>> inFlight = new HashMap<>();  // per destination, for crash cuts
        long gmsLast = 0;

        Node(String name, CoreConfig c) {
            this.name = name;
            this.core = new TotalOrderCore(name, c, this);
        }

        @Override public void send(String to, Proto msg) {
            byte[] wire = encode ? Codec.encode(msg) : null;
            if (to == null) { for (String m : view) if (!m.equals(name)) transmit(this, m, msg, wire); }
            else transmit(this, to, msg, wire);
        }
        @Override public void optimistic(GcsMessage m) {
            checker.optimistic(name, m);
            GcsListener l = listener();
            if (l != null) toApplication(l, () -> l.optimistic(m));
        }
        @Override public void ordered(GcsMessage m, long gsn, long slot) {
            trace(name + " FINAL " + m.id() + " gsn=" + gsn + " slot=" + slot + " " + core);
            checker.ordered(name, m, gsn, slot);
            GcsListener l = listener();
            if (l != null) toApplication(l, () -> l.ordered(m, gsn));
        }
        @Override public void reliable(GcsMessage m) {
            trace(name + " RELIABLE " + m.id());
            checker.reliable(name, m);
            GcsListener l = listener();
            if (l != null) toApplication(l, () -> l.reliable(m));
        }
        @Override public void view(GcsView v) {
            trace(name + " VIEW " + v);
            checker.view(name, v);
            GcsListener l = listener();
            if (l != null) toApplication(l, () -> l.viewChanged(v));
        }
        @Override public void sitesChanged(List<String> sites, long gsn) {
            trace(name + " SITES " + sites + " at gsn=" + gsn);
            checker.sitesChanged(name, sites, gsn);
            GcsListener l = listener();
            if (l != null) toApplication(l, () -> l.sitesChanged(sites, gsn));
        }
        @Override public void undeliverable(MsgId id, Delivery d, String reason) {
            checker.undeliverable(name, id);
            GcsListener l = listener();
            if (l != null) toApplication(l, () -> l.undeliverable(id, d, reason));
        }
        /** A crashed member's application hears nothing more. */
        private GcsListener listener() { return alive ? listeners.get(name) : null; }

        /**
         * As JGroupsGcs's delivery thread does, the application hears of it after the core's handler
         * returned (it may multicast from the callback), in order, at the same virtual time.
         */
        private void toApplication(GcsListener l, Runnable callback) {
            schedule(0, () -> { if (alive && listeners.get(name) == l) callback.run(); });
        }
    }

    public Simulator(long seed, List<String> sites, String sequencerSite) {
        this.rnd = new Random(seed);
        this.cfg = new CoreConfig(sites, sequencerSite, TICK_MS, 64, true);
        this.checker = new Checker();
        for (String s : sites) addNode(s);
        scheduleMembership(0);
        schedule(TICK_MS, this::tickAll);
    }

    Node addNode(String site) {
        return addNode(site, cfg, null);
    }

    /** A member of {@code site} configured with {@code c}; it may bootstrap a group if it is the site's first, unless told. */
    private Node addNode(String site, CoreConfig c, Boolean mayBootstrap) {
        int inc = incarnations.merge(site, 1, Integer::sum);
        Node n = new Node(Members.name(site, Integer.toString(inc)), c.withBootstrap(mayBootstrap != null ? mayBootstrap : inc == 1));
        nodes.put(n.name, n);
        partition.put(n.name, 0);
        checker.member(n.name);
        return n;
    }

    public void schedule(long delay, Runnable r) {
        Event e = new Event() { void run() { r.run(); } };
        e.time = now + delay;
        e.seq = eventSeq++;
        events.add(e);
    }

    private void transmit(Node from, String to, Proto msg, byte[] wire) {
        Node dest = nodes.get(to);
        if (dest == null || !from.alive) return;
        long at = Math.max(from.linkLast.getOrDefault(to, 0L), now + 1 + rnd.nextInt(maxDelayMs));
        from.linkLast.put(to, at);
        List<Event> flight = from.inFlight.computeIfAbsent(to, k -> new ArrayList<>());
        int part = partition.get(from.name);
        long sv = from.viewId;
        Event e = new Event() {
            void run() {
                flight.remove(this);
                if (!dest.alive) return;
                String link = from.name + ">" + dest.name + "@" + sv;
                if (broken.contains(link)) return;
                if (partition.get(dest.name) != part || partition.get(from.name) != part) { broken.add(link); return; }
                Proto m = wire != null ? Codec.decode(wire, 0, wire.length) : msg;
                dest.core.onMessage(from.name, m, now);
                dest.core.onTick(now);
                checker.step(Simulator.this);
            }
        };
        e.time = at;
        e.seq = eventSeq++;
        flight.add(e);
        events.add(e);
    }

    /**
     * A sender's stream to a receiver, within one of the sender's views, that lost a message to a
     * partition stays silent: JGroups never delivers past a hole in a sender's stream, it changes
     * the view, after which the sender's messages form a new stream.
     */
    private final Set<String> broken = new HashSet<>();

    /** Crash: each outgoing link keeps a random prefix of its in-flight messages. */
    static final boolean TRACE = Boolean.getBoolean("wanrep.sim.trace");
    void trace(String s) { if (TRACE) System.out.println("[" + now + "] " + s); }

    public void crash(String name) {
        trace("CRASH " + name);
        Node n = nodes.get(name);
        if (n == null || !n.alive) return;
        n.alive = false;
        for (List<Event> flight : n.inFlight.values()) {
            int keep = flight.isEmpty() ? 0 : rnd.nextInt(flight.size() + 1);
            for (int i = flight.size() - 1; i >= keep; i--) events.remove(flight.remove(i));
        }
        checker.crashed(name);
        scheduleMembership(20 + rnd.nextInt(150));
    }

    /** Splits the alive members into labelled groups; traffic across groups stops (in-flight suffixes lost). */
    public void partition(Map<String, Integer> labels) {
        trace("PARTITION " + labels);
        for (Node n : nodes.values()) {
            Integer l = labels.get(n.name);
            partition.put(n.name, l == null ? 0 : l);
        }

        scheduleMembership(20 + rnd.nextInt(150));
    }

    /** Like JGroups' DISCARD at {@code to} for traffic from {@code from}: the stream stops until a view change. */
    public void dropLink(String from, String to) {
        broken.add(from + ">" + to + "@" + nodes.get(from).viewId);
    }

    public void heal() {
        trace("HEAL");
        for (String m : partition.keySet()) partition.put(m, 0);
        scheduleMembership(20 + rnd.nextInt(150));
    }

    public Node restart(String site) {
        Node n = addNode(site);
        scheduleMembership(10 + rnd.nextInt(100));
        return n;
    }

    private void scheduleMembership(long delay) {
        schedule(delay, this::installViews);
    }

    /** The membership service: one view per connected group of alive members, delivered at random times. */
    private void installViews() {
        Map<Integer, List<String>> groups = new LinkedHashMap<>();
        for (Node n : nodes.values()) if (n.alive) groups.computeIfAbsent(partition.get(n.name), k -> new ArrayList<>()).add(n.name);
        for (List<String> g : groups.values()) {
            long id = ++viewCounter;
            List<String> ms = List.copyOf(g);
            for (String m : ms) {
                Node n = nodes.get(m);
                long at = Math.max(n.gmsLast, now + 1 + rnd.nextInt(maxDelayMs));
                n.gmsLast = at;
                Event e = new Event() {
                    void run() {
                        if (!n.alive) return;
                        trace(n.name + " membership " + id + " " + ms);
                        n.view = ms;
                        n.viewId = id;
                        n.core.onView(id, ms, now);
                        n.core.onTick(now);
                        checker.step(Simulator.this);
                    }
                };
                e.time = at;
                e.seq = eventSeq++;
                events.add(e);
            }
        }
    }

    private void tickAll() {
        for (Node n : nodes.values()) if (n.alive) n.core.onTick(now);
        checker.step(this);
        schedule(TICK_MS, this::tickAll);
    }

    /** Multicast from a member; returns null if refused (not primary). */
    public MsgId multicast(String member, Delivery d, byte[] payload) {
        if (!isAlive(member)) return null;
        try {
            return send(member, d, payload);
        } catch (NotPrimaryException e) {
            return null;
        }
    }

    /**
     * Multicast from a member as {@code Gcs.multicast} does: {@link NotPrimaryException} outside the
     * primary component, {@link IllegalStateException} from a crashed member.
     */
    public MsgId send(String member, Delivery d, byte[] payload) {
        Node n = nodes.get(member);
        if (n == null || !n.alive) throw new IllegalStateException(member + " is not running");
        MsgId id = n.core.multicast(payload, d, now);
        checker.sent(member, id, d);
        trace(member + " SEND " + id + " " + d + " " + n.core);
        n.core.onTick(now);
        checker.step(this);
        return id;
    }

    /** Attaches the application of {@code member}: it gets every callback after the checker saw it. */
    public void listen(String member, GcsListener l) { listeners.put(member, l); }

    /**
     * Starts a member of a site that is new to the group (as {@code cluster add-site} does): configured
     * with {@code configured} sites (what its files say), never bootstrapping a group of its own.
     */
    public String addSite(String site, List<String> configured) {
        // the sequencer setting is pinned to the running members' one (cluster add-site does so), listed sites or not
        Node n = addNode(site, new CoreConfig(configured, cfg.sequencerSite(), cfg.ackIntervalMs(), cfg.maxOrderBatch(), false), false);
        scheduleMembership(10 + rnd.nextInt(100));
        return n.name;
    }

    /** Orders a configuration change from a member, as {@code TotalOrderCore.changeSites}; null if refused (not primary). */
    public MsgId changeSites(String member, List<String> sites) {
        Node n = nodes.get(member);
        if (n == null || !n.alive) return null;
        try {
            MsgId id = n.core.changeSites(sites, new byte[]{'S'}, now);
            checker.sent(member, id, Delivery.SAFE);
            trace(member + " CHANGE " + id + " " + sites);
            n.core.onTick(now);
            return id;
        } catch (NotPrimaryException e) {
            return null;
        }
    }

    /** The configured sites as a member sees them now. */
    public List<String> sitesOf(String member) { return nodes.get(member).core.sites(); }

    /** Forces a new membership view with unchanged members (as a merge or a join would), so that every member flushes. */
    public void newView() { scheduleMembership(1); }

    /** Restarts a site as a new incarnation; returns the new member's name. */
    public String restartSite(String site) { return restart(site).name; }

    /**
     * Restarts a site as a new incarnation whose files name {@code configured} sites (the set the group last
     * gave it, as the middleware's {@code SITE.sites}) and the same sequencer setting as every other member.
     */
    public String restartSite(String site, List<String> configured) {
        Node n = addNode(site, new CoreConfig(configured, cfg.sequencerSite(), cfg.ackIntervalMs(), cfg.maxOrderBatch(), false), false);
        scheduleMembership(10 + rnd.nextInt(100));
        return n.name;
    }

    public long now() { return now; }

    /** Upper bound of a link's random delay (ms). */
    public void maxDelayMs(int ms) { maxDelayMs = ms; }

    public boolean isAlive(String member) {
        Node n = nodes.get(member);
        return n != null && n.alive;
    }

    public boolean isPrimary(String member) { return isAlive(member) && nodes.get(member).core.isPrimary(); }

    /** {@code Gcs.current()}: the member holds its read lease now. */
    public boolean isCurrent(String member) { return isAlive(member) && nodes.get(member).core.leaseExpiry() > now; }

    public List<String> aliveMembers() { return alive().stream().map(n -> n.name).toList(); }

    /** See {@link Checker#progressExpected}. */
    public boolean progressExpected(List<String> survivors) {
        // A survivor that accepted a plan whose other members are mostly gone cannot tell whether that plan
        // was installed without it; it must wait (dynamic linear voting), so nothing can be expected of it.
        for (String s : survivors) {
            List<String> accepted = nodes.get(s).core.acceptedPlanMembers();
            if (!accepted.isEmpty() && accepted.stream().filter(survivors::contains).count() * 2 <= accepted.size()) return false;
        }
        return checker.progressExpected(survivors);
    }

    /** See {@link Checker#checkEnd}: the total order's own invariants among the survivors. */
    public void checkEnd(List<String> survivors) { checker.checkEnd(survivors); }

    public void runUntil(long time) {
        while (!events.isEmpty() && events.peek().time <= time) {
            Event e = events.poll();
            now = e.time;
            e.run();
        }
        now = time;
    }

    public List<Node> alive() {
        List<Node> out = new ArrayList<>();
        for (Node n : nodes.values()) if (n.alive) out.add(n);
        return out;
    }

    public Set<String> aliveSites() {
        Set<String> s = new HashSet<>();
        for (Node n : alive()) s.add(Members.siteOf(n.name));
        return s;
    }
}
