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
 *
 * <p>Ticks: as JGroupsGcs's ticker, each member is ticked at its core's {@link TotalOrderCore#nextDeadline},
 * as computed after its last step; besides, every member is ticked every {@value #TICK_MS} ms, and that tick
 * checks the deadline: it must send something exactly when the promised deadline has come (a tick that acts
 * earlier means the adapter's ticker would have slept through it; one that does nothing at the deadline, a
 * ticker that spins).
 *
 * <p>Link delays are random up to {@link #maxDelayMs} unless fixed with {@link #linkDelays} (for timing tests).
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
    /**
     * Whether each step's messages to one member travel as one message (a bundle: processed in one step there,
     * with one post-step tick), as JGroupsGcs sends them; else each alone, with its own delay. Drawn from the
     * seed (without touching the schedule's random stream), so seeded schedules cover both.
     */
    boolean bundleSteps;
    /** Fixed one-way delay per link (sender, receiver member names), or null: random. */
    private java.util.function.ToLongBiFunction<String, String> fixedDelay;

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
        /** Multicasts and unicasts the core asked for, by message type (a multicast counts once). */
        final Map<Class<?>, Integer> sentByType = new HashMap<>();
        /** ACKs sent, by destination ({@link #ALL}: multicast). */
        final Map<String, Integer> acksTo = new HashMap<>();
        int sends;
        /** The core's deadline as of its last step, and the time of the live tick event (MAX_VALUE: none). */
        long promised = Long.MAX_VALUE, tickAt = Long.MAX_VALUE;
        long tickGen;
        String lastSent;
        /** The epoch and heldThrough of the last DATA, ORDER or ACK sent since the last view callback. */
        long toldEpoch = -1, told = -1;

        /**
         * What a DATA, ORDER or ACK says its sender holds (receivers merge it as an acknowledgement) is true when
         * sent: the sender has installed that epoch, holds at least that far, and never said more before in it.
         */
        private void checkTold(Proto msg) {
            long epoch, h;
            switch (msg) {
                case Proto.Data d -> { epoch = d.epoch(); h = d.heldThrough(); }
                case Proto.Order o -> { epoch = o.epoch(); h = o.heldThrough(); }
                case Proto.Ack a -> { epoch = a.epoch(); h = a.heldThrough(); }
                default -> { return; }
            }
            if (!core.isPrimary() || epoch != core.epoch())
                throw new AssertionError("[" + now + "] " + name + " sent " + msg.getClass().getSimpleName() + " of epoch " + epoch + ": " + core);
            if (h > core.heldThrough() || (epoch == toldEpoch && h < told))
                throw new AssertionError("[" + now + "] " + name + " sent " + msg.getClass().getSimpleName() + " saying it holds through " + h
                        + " (said " + told + " before in epoch " + toldEpoch + "): " + core);
            toldEpoch = epoch;
            told = h;
        }

        Node(String name, CoreConfig c) {
            this.name = name;
            this.core = new TotalOrderCore(name, c, this);
        }

        @Override public void send(String to, Proto msg) {
            sends++;
            lastSent = msg.getClass().getSimpleName();
            sentByType.merge(msg.getClass(), 1, Integer::sum);
            if (msg instanceof Proto.Ack) acksTo.merge(to == null ? ALL : to, 1, Integer::sum);
            checkTold(msg);
            if (bundleSteps) {
                // as JGroupsGcs: what one step sends goes out together when the step ends (afterStep)
                for (String m : to == null ? view : List.of(to))
                    if (!m.equals(name)) stepOut.computeIfAbsent(m, k -> new ArrayList<>()).add(msg);
                return;
            }
            byte[] wire = encode ? Codec.encode(msg) : null;
            if (to == null) { for (String m : view) if (!m.equals(name)) transmit(this, m, List.of(msg), wire); }
            else transmit(this, to, List.of(msg), wire);
        }

        /** This step's messages per destination, in order (with {@link #bundleSteps}). */
        final Map<String, List<Proto>> stepOut = new LinkedHashMap<>();

        void flushStep() {
            if (stepOut.isEmpty()) return;
            for (var e : stepOut.entrySet()) {
                List<Proto> ms = e.getValue();
                byte[] wire = !encode ? null : ms.size() == 1 ? Codec.encode(ms.get(0)) : Codec.bundle(ms.stream().map(Codec::encode).toList());
                transmit(this, e.getKey(), ms, wire);
            }
            stepOut.clear();
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
            toldEpoch = -1;
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
        this(seed, new CoreConfig(sites, sequencerSite, TICK_MS, 64, true));
    }

    /** With every member configured by {@code cfg} (its sites, sequencer, ack interval, heartbeat...). */
    public Simulator(long seed, CoreConfig cfg) {
        this.rnd = new Random(seed);
        this.bundleSteps = new Random(seed ^ 0x5DEECE66DL).nextBoolean();
        this.cfg = cfg;
        List<String> sites = cfg.sites();
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

    private void transmit(Node from, String to, List<Proto> msgs, byte[] wire) {
        Node dest = nodes.get(to);
        if (dest == null || !from.alive) return;
        long delay = fixedDelay != null ? fixedDelay.applyAsLong(from.name, to) : 1 + rnd.nextInt(maxDelayMs);
        long at = Math.max(from.linkLast.getOrDefault(to, 0L), now + delay);
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
                List<Proto> ms = wire != null ? Codec.decodeAll(wire, 0, wire.length) : msgs;
                for (Proto m : ms) dest.core.onMessage(from.name, m, now);
                dest.core.onTick(now);
                afterStep(dest);
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
                        afterStep(n);
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
        for (Node n : nodes.values()) if (n.alive) checkedTick(n);
        checker.step(this);
        schedule(TICK_MS, this::tickAll);
    }

    /** A tick that checks the deadline promised after the member's last step: it acts exactly when that has come. */
    private void checkedTick(Node n) {
        boolean due = now >= n.promised;
        int before = n.sends;
        n.core.onTick(now);
        boolean acted = n.sends != before;
        if (acted != due)
            throw new AssertionError("[" + now + "] " + n.name + ": a tick " + (acted ? "sent " + n.lastSent + " before" : "did nothing at")
                    + " the deadline " + n.promised + " its core promised: " + n.core);
        afterStep(n);
    }

    /** After a step of {@code n}'s core: its next deadline, and a tick event then (as JGroupsGcs's ticker sleeps until it). */
    private void afterStep(Node n) {
        n.flushStep();
        long d = n.core.nextDeadline(now);
        n.promised = d;
        if (d == Long.MAX_VALUE || d >= n.tickAt) return;
        n.tickAt = d;
        long gen = ++n.tickGen;
        Event e = new Event() {
            void run() {
                if (!n.alive || n.tickGen != gen) return;
                n.tickAt = Long.MAX_VALUE;
                if (now >= n.promised) {
                    checkedTick(n);
                    checker.step(Simulator.this);
                } else {
                    afterStep(n);   // the deadline moved on (an acknowledgement went out meanwhile): sleep until the new one
                }
            }
        };
        e.time = Math.max(d, now);
        e.seq = eventSeq++;
        events.add(e);
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
        afterStep(n);
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
            afterStep(n);
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

    /** Whether each step's messages to one member travel together (see {@link #bundleSteps}). */
    public void bundleSteps(boolean b) { bundleSteps = b; }

    /**
     * Fixes every link's one-way delay (ms, at least 1) as a function of the sender's and the receiver's member
     * names, instead of random ones; links stay FIFO. For timing tests; set it before traffic whose timing counts.
     */
    public void linkDelays(java.util.function.ToLongBiFunction<String, String> delay) { fixedDelay = delay; }

    /** How many messages of this type {@code member}'s core sent (a multicast counts once). */
    public int sent(String member, Class<? extends Proto> type) { return nodes.get(member).sentByType.getOrDefault(type, 0); }

    /** The destination of a multicast in {@link #acksSent}. */
    public static final String ALL = "*";

    /** ACKs {@code member} sent to {@code to} alone, or to every member ({@link #ALL}). */
    public int acksSent(String member, String to) { return nodes.get(member).acksTo.getOrDefault(to, 0); }

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
