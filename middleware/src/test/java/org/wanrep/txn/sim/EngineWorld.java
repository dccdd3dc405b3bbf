package org.wanrep.txn.sim;

import org.wanrep.txn.ReorderingListener;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.Gcs;
import org.wanrep.gcs.GcsListener;
import org.wanrep.gcs.GcsMessage;
import org.wanrep.gcs.GcsView;
import org.wanrep.gcs.Members;
import org.wanrep.gcs.MsgId;
import org.wanrep.gcs.sim.Simulator;
import org.wanrep.txn.ExecutionPolicy;
import org.wanrep.txn.ReplicationEngine;
import org.wanrep.txn.WriteSetIo;
import org.wanrep.txn.RequestId;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * N sites, each a {@link ReplicationEngine} over a {@link MemExecutor} and its {@link MemReplica},
 * members of gcs's {@link Simulator}: one seeded, single-threaded, virtual-time world in which the
 * network, the databases' answers, the clients ({@link Workload}) and the faults (crashes, the
 * sequencer's included, partitions, restarts, injected database failures) are all events. A run is
 * a pure function of its seed.
 */
final class EngineWorld {
    /** Prefix of the reasons for which a site may stop: a fault this world injected. */
    static final String INJECTED = "injected: ";

    /** Rates of injected database failures. */
    static final class Faults {
        double executeRetry, commitRetry, connectionLost, applyError;
    }

    /** One site process: its group member, engine, executor and replica. */
    final class SiteNode {
        final String site, member;
        final MemReplica replica;
        final MemExecutor executor;
        final ReplicationEngine engine;
        final Set<RequestId> refused = new HashSet<>();
        boolean stopped, injectedApplyError;
        String stopReason;
        /** The highest GSN committed here so far: commits follow the total order at every site. */
        long lastCommitGsn;

        /** {@code t} commits here now: never before a transaction ordered before it (readers would see no prefix of the order). */
        void commitsInOrder(org.wanrep.txn.Txn t) {
            if (t.gsn() <= 0) return;
            if (t.gsn() < lastCommitGsn) violation(this + ": " + t + " (GSN " + t.gsn() + ") commits after GSN " + lastCommitGsn + " did");
            lastCommitGsn = Math.max(lastCommitGsn, t.gsn());
        }
        GcsView view;

        SiteNode(String member, MemReplica replica) {
            this.member = member;
            this.site = Members.siteOf(member);
            this.replica = replica;
            this.executor = new MemExecutor(EngineWorld.this, this);
            this.engine = new ReplicationEngine(site, delivery, executor, new ExecutionPolicy(policy, sites, Map.of()),
                    policy == ExecutionPolicy.Kind.SYMMETRIC ? WriteSetIo.NONE : new MemWriteSetIo(EngineWorld.this, this));
            // no positions recorded here (a real symmetric site records them and transfers state): every simulated
            // replica keeps whether it took part in a history, as a write-set site's does (Site)
            try {
                engine.markHistoryWith(new ReplicationEngine.HistoryMarker() {
                    @Override public boolean marked() { return replica.history; }
                    @Override public void mark() { replica.history = true; }
                    @Override public void clear() { replica.history = false; }
                });
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            engine.replicaConnections(2 + rnd.nextInt(3));   // few: transactions waiting for a connection, and for their turn
            engine.attach(new SimGcs(this));
            engine.onFatal(reason -> stop(this, reason));
            GcsListener l = engine;
            if (delivery == Delivery.OPT_SAFE) {   // optimistic orders that differ from the final one
                ReorderingListener r = new ReorderingListener(engine, rnd);
                reorderings.add(r);
                l = r;
            }
            sim.listen(member, new Forward(this, l));
        }

        /** Running and not stopped (its database answers). */
        boolean serving() { return !stopped && sim.isAlive(member); }

        /** Serving clients: as a real site, only while its replica is current (in the primary component, lease held). */
        boolean ready() { return serving() && engine.current(); }

        @Override public String toString() { return member; }
    }

    final long seed;
    final Random rnd;
    final Simulator sim;
    final Delivery delivery;
    /** Symmetric execution, or a write-set policy (drawn from the seed). */
    final ExecutionPolicy.Kind policy;
    final Faults faults = new Faults();
    final int maxLatencyMs;
    final List<String> sites = new ArrayList<>();
    final Map<String, SiteNode> nodes = new LinkedHashMap<>();
    final EngineChecker checker;
    final Workload workload;
    /** Opt-safe: the listeners that release optimistic deliveries shuffled (they count how often). */
    final List<ReorderingListener> reorderings = new ArrayList<>();
    /** Faults, stops and views, for a failure's report. */
    final List<String> notes = new ArrayList<>();
    /** The sequencer of the latest primary view seen anywhere (crashed more often than its share). */
    String sequencer;

    EngineWorld(long seed, Delivery delivery) {
        this.seed = seed;
        this.delivery = delivery;
        this.rnd = new Random(seed);
        int n = 3 + rnd.nextInt(3);
        for (int i = 0; i < n; i++) sites.add("s" + i);
        this.sim = new Simulator(rnd.nextLong(), sites, null);
        this.policy = switch (rnd.nextInt(4)) {
            case 0 -> ExecutionPolicy.Kind.PRIMARY_COPY;
            case 1 -> ExecutionPolicy.Kind.LOCAL_COPY;
            default -> ExecutionPolicy.Kind.SYMMETRIC;
        };
        sim.maxDelayMs(1 + rnd.nextInt(40));
        this.maxLatencyMs = 1 + rnd.nextInt(20);
        faults.executeRetry = rnd.nextInt(3) * 0.03;
        faults.commitRetry = rnd.nextInt(3) * 0.02;
        faults.connectionLost = rnd.nextInt(4) == 0 ? 0.002 : 0;
        faults.applyError = rnd.nextInt(4) == 0 ? 0.002 : 0;
        this.checker = new EngineChecker(this);
        this.workload = new Workload(this);
        for (String s : sites) addNode(Members.name(s, "1"), new MemReplica());
    }

    private SiteNode addNode(String member, MemReplica replica) {
        SiteNode node = new SiteNode(member, replica);
        nodes.put(member, node);
        return node;
    }

    /** A bug the world saw as it happened (checked at the end, with the seed). */
    void violation(String what) { checker.violation("[t=" + sim.now() + "] " + what); }

    void note(String what) { notes.add("[t=" + sim.now() + "] " + what); }

    /** Fail-stop: the site stops at once (its process is gone; the group sees a crash). */
    void stop(SiteNode node, String reason) {
        if (node.stopped) return;
        node.stopped = true;
        node.stopReason = reason;
        note("STOP " + node + ": " + reason);
        // not from inside the callback that asked for it: the simulator is not re-entrant
        sim.schedule(0, () -> {
            sim.crash(node.member);
            node.engine.shutdown(reason);
        });
    }

    /** Load with random faults until {@code horizon}, then heal, quiesce and check. */
    void run() {
        long horizon = 1000 + rnd.nextInt(2000);
        int faultCount = rnd.nextInt(4);
        List<Long> faultTimes = new ArrayList<>();
        for (int i = 0; i < faultCount; i++) faultTimes.add(200L + rnd.nextInt((int) horizon));
        faultTimes.sort(null);
        sim.runUntil(300);   // the first primary view
        for (long t = 300; t < horizon; t += 1 + rnd.nextInt(4)) {
            sim.runUntil(t);
            workload.tick();
            if (!faultTimes.isEmpty() && faultTimes.get(0) <= t) {
                faultTimes.remove(0);
                fault();
            }
        }
        note("HEAL (end of load)");
        sim.heal();
        sim.runUntil(sim.now() + 3000);
        // drain the backlog (an overloaded run may need long), then some more for the last views
        for (long end = sim.now() + 120_000; sim.now() < end && !quiet(); ) sim.runUntil(sim.now() + 500);
        sim.runUntil(sim.now() + 2000);
        checker.checkEnd();
    }

    private boolean quiet() {
        for (SiteNode n : nodes.values())
            if (n.serving() && (n.engine.pending() > 0 || n.executor.open() > 0)) return false;
        return true;
    }

    private void fault() {
        List<String> alive = sim.aliveMembers();
        if (alive.isEmpty()) return;
        switch (rnd.nextInt(5)) {
            case 0, 1 -> {   // crash, the sequencer more often than its share
                String victim = alive.get(rnd.nextInt(alive.size()));
                if (sequencer != null && rnd.nextBoolean() && sim.isAlive(sequencer)) victim = sequencer;
                note("CRASH " + victim + (victim.equals(sequencer) ? " (sequencer)" : ""));
                sim.crash(victim);
                nodes.get(victim).engine.shutdown("crashed");
            }
            case 2 -> {      // partition in two
                Map<String, Integer> labels = new HashMap<>();
                for (String m : alive) labels.put(m, rnd.nextInt(2));
                note("PARTITION " + labels);
                sim.partition(labels);
            }
            case 3 -> {
                note("HEAL");
                sim.heal();
            }
            default -> {     // restart a crashed site: its replica is what its disk holds, its engine starts afresh
                for (String s : sites) {
                    if (sim.aliveMembers().stream().anyMatch(m -> Members.siteOf(m).equals(s))) continue;
                    SiteNode last = null;
                    for (SiteNode n : nodes.values()) if (n.site.equals(s)) last = n;
                    String member = sim.restartSite(s);
                    note("RESTART " + member);
                    addNode(member, new MemReplica(last.replica));
                    break;
                }
            }
        }
    }

    /** The engine's group: the simulator's member. */
    private final class SimGcs implements Gcs {
        private final SiteNode node;
        SimGcs(SiteNode node) { this.node = node; }
        @Override public MsgId multicast(byte[] payload, Delivery d) { return sim.send(node.member, d, payload); }
        @Override public String self() { return node.member; }
        @Override public GcsView view() { return node.view; }
        @Override public boolean current() { return sim.isCurrent(node.member); }
        @Override public void close() { }
    }

    /** Delivers to a site's engine until the site stops; notes views (and the sequencer). */
    private final class Forward implements GcsListener {
        private final SiteNode node;
        private final GcsListener inner;
        Forward(SiteNode node, GcsListener inner) { this.node = node; this.inner = inner; }

        @Override public void optimistic(GcsMessage m) { if (!node.stopped) inner.optimistic(m); }
        @Override public void ordered(GcsMessage m, long gsn) { if (!node.stopped) inner.ordered(m, gsn); }
        @Override public void reliable(GcsMessage m) { if (!node.stopped) inner.reliable(m); }
        @Override public void undeliverable(MsgId id, Delivery d, String reason) { if (!node.stopped) inner.undeliverable(id, d, reason); }
        @Override public void viewChanged(GcsView v) {
            if (node.stopped) return;
            node.view = v;
            note(node + " VIEW " + v);
            if (v.primary() && v.sequencer() != null) sequencer = v.sequencer();
            inner.viewChanged(v);
        }
    }
}
