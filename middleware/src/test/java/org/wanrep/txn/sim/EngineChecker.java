package org.wanrep.txn.sim;

import org.wanrep.gcs.Delivery;
import org.wanrep.txn.RequestId;
import org.wanrep.txn.Txn;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * What must hold after a run, once healed and quiet: among the sites that run and did not stop
 * (the survivors), identical replicas (values, committed and refused transactions); every
 * acknowledged transaction committed at every survivor (uniform delivery; with agreed delivery only
 * if its origin survived: agreed is not uniform); nothing pending, no lock held, no client left
 * waiting; every stopped site stopped for a fault this world injected (or because it came back
 * without the history, which needs state transfer). Violations seen during the run (a commit over
 * a table that changed since the attempt ran, a double commit...) fail it too.
 */
final class EngineChecker {
    private record Submission(EngineWorld.SiteNode node, RequestId id, CompletableFuture<Txn> future) {}

    private final EngineWorld w;
    private final List<String> violations = new ArrayList<>();
    private final List<Submission> submissions = new ArrayList<>();
    final Map<RequestId, EngineWorld.SiteNode> acknowledged = new LinkedHashMap<>();
    /** Whether the last run's survivors formed a primary component (else only the violations were checked). */
    boolean progressChecked;

    EngineChecker(EngineWorld w) { this.w = w; }

    void violation(String what) { violations.add(what); }

    void submitted(EngineWorld.SiteNode n, RequestId id, CompletableFuture<Txn> f) { submissions.add(new Submission(n, id, f)); }

    void acknowledged(EngineWorld.SiteNode n, RequestId id) { acknowledged.put(id, n); }

    private static void fail(String what) { throw new AssertionError(what); }

    void checkEnd() {
        if (!violations.isEmpty()) fail(violations.size() + " violation(s), first: " + violations.get(0));
        for (EngineWorld.SiteNode n : w.nodes.values()) {
            if (!n.stopped) continue;
            boolean expected = n.stopReason.startsWith(EngineWorld.INJECTED)
                    || n.stopReason.contains("re-entered the primary component")            // no state transfer yet
                    || n.stopReason.contains("cannot ship its write set")                    // committed, then cut off
                    || n.stopReason.contains("could not apply the write set") && n.injectedApplyError;
            if (!expected)
                fail(n + " stopped for no injected fault: " + n.stopReason);
        }
        List<String> alive = w.sim.aliveMembers();
        // without a majority of the configured sites, or with the history gone with a majority, nobody may go
        // on (gcs's tests check that); a site that missed transactions cannot come back without state transfer
        long sites = alive.stream().map(org.wanrep.gcs.Members::siteOf).distinct().count();
        progressChecked = sites * 2 > w.sites.size() && w.sim.progressExpected(alive);
        if (!progressChecked) return;
        w.sim.checkEnd(alive);
        List<EngineWorld.SiteNode> survivors = new ArrayList<>();
        for (String m : alive) {
            EngineWorld.SiteNode n = w.nodes.get(m);
            if (!w.sim.isPrimary(m)) fail(m + " is not in the primary component after healing");
            if (n.engine.view() == null || !n.engine.view().primary()) fail(m + "'s engine has no primary view after healing: " + n.engine.view());
            survivors.add(n);
        }
        for (EngineWorld.SiteNode n : survivors) {
            if (n.engine.pending() != 0 || n.executor.open() != 0)
                fail(n + " is not quiescent: " + n.engine.describe() + ", " + n.executor.open() + " open attempts:" + n.executor.describeOpen() + "; transactions: " + transactions(n));
            if (!n.engine.describe().contains("queues {}")) fail(n + " holds locks at quiescence: " + n.engine.describe());
        }
        for (Submission s : submissions)
            if (survivors.contains(s.node()) && !s.future().isDone()) fail(s.node() + ": the client of " + s.id() + " still waits at quiescence");
        EngineWorld.SiteNode ref = survivors.isEmpty() ? null : survivors.get(0);
        for (EngineWorld.SiteNode n : survivors) {
            if (!n.replica.data.equals(ref.replica.data))
                fail("replicas differ: " + ref + " " + ref.replica.data + " vs " + n + " " + n.replica.data);
            if (!n.replica.applied.equals(ref.replica.applied))
                fail("committed transactions differ: " + ref + " " + missing(ref, n) + " that " + n + " lacks, " + n + " " + missing(n, ref) + " that " + ref + " lacks");
            // (under a write-set policy only the executor sees a refusal; the others only learn it failed)
            if (w.policy == org.wanrep.txn.ExecutionPolicy.Kind.SYMMETRIC && !n.refused.equals(ref.refused)) fail("refused transactions differ: " + ref + " " + ref.refused + " vs " + n + " " + n.refused);
        }
        for (var e : acknowledged.entrySet()) {
            if (w.delivery == Delivery.AGREED && !survivors.contains(e.getValue())) continue;   // agreed: not uniform
            for (EngineWorld.SiteNode n : survivors)
                if (!n.replica.applied.contains(e.getKey())) fail(e.getKey() + " was acknowledged at " + e.getValue() + " but " + n + " lacks it");
        }
    }

    /** The engine's transactions with their kinds, for a failure message (its own describe() only counts them). */
    static String transactions(EngineWorld.SiteNode n) {
        try {
            java.lang.reflect.Field f = n.engine.getClass().getDeclaredField("txns");
            f.setAccessible(true);
            StringBuilder b = new StringBuilder();
            synchronized (n.engine) {
                for (Object o : ((Map<?, ?>) f.get(n.engine)).values()) {
                    Txn t = (Txn) o;
                    b.append(' ').append(t).append(' ').append(t.request().kind()).append(t.work() != t.request() ? "+" + t.work().kind() : "");
                }
            }
            return b.toString();
        } catch (ReflectiveOperationException e) {
            return e.toString();
        }
    }

    private static List<RequestId> missing(EngineWorld.SiteNode has, EngineWorld.SiteNode lacks) {
        List<RequestId> out = new ArrayList<>(has.replica.applied);
        out.removeAll(lacks.replica.applied);
        return out;
    }
}
