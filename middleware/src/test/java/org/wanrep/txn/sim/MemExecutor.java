package org.wanrep.txn.sim;

import org.wanrep.txn.Txn;
import org.wanrep.txn.TxnExecutor;

import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@link TxnExecutor} over a {@link MemReplica}: every call returns at once and reports later, at a
 * random latency, as an event of the same virtual-time world. Writes are buffered per attempt and
 * applied at COMMIT. Failures are drawn from the world's seed:
 * <ul>
 *   <li>RETRY from an execution (deadlock, lock timeout) or from COMMIT (serialization failure): transient;
 *   <li>ERROR where the statements say so (a constraint: {@code sub}, deferred {@code dfr}): deterministic,
 *       the same at every site as long as they run in the same order;
 *   <li>the connection lost during COMMIT: the outcome is unknown (committed or not, drawn), so the
 *       executor stops its site (fail-stop) and never reports: it must not go on possibly different.
 * </ul>
 * A COMMIT also checks that no table its attempt read or wrote changed since the attempt ran: the
 * lock manager must have kept every conflicting transaction out meanwhile.
 */
final class MemExecutor implements TxnExecutor {
    /** One execution attempt of a transaction here. */
    private static final class Attempt {
        boolean ran, cancelled;
        Map<String, Long> writes = new HashMap<>();
        Map<String, Long> versions = Map.of();
        String error;
        boolean committed;
        /** COMMIT went with the execution: its outcome, reported by commit(). */
        Outcome fused;
    }

    private final EngineWorld world;
    final EngineWorld.SiteNode node;
    private final MemReplica replica;
    private final Map<Txn, Attempt> attempts = new IdentityHashMap<>();

    MemExecutor(EngineWorld world, EngineWorld.SiteNode node) {
        this.world = world;
        this.node = node;
        this.replica = node.replica;
    }

    /** Attempts not finished (0 at quiescence). */
    int open() { return attempts.size(); }

    /** The open attempts, for a failure message. */
    String describeOpen() {
        StringBuilder b = new StringBuilder();
        for (var e : attempts.entrySet())
            b.append(' ').append(e.getKey()).append(e.getValue().ran ? " ran" : " running").append(e.getValue().cancelled ? " cancelled" : "")
                    .append(e.getValue().error != null ? " error" : "").append(e.getValue().fused != null ? " fused " + e.getValue().fused : "");
        return b.toString();
    }

    private void later(Runnable r) {
        world.sim.schedule(1 + world.rnd.nextInt(world.maxLatencyMs), () -> {
            if (node.serving()) r.run();   // a stopped or crashed site's database answers nobody
        });
    }

    @Override public void execute(Txn t, boolean commit, Done done) {
        Attempt a = new Attempt();
        Attempt before = attempts.put(t, a);
        if (before != null && !before.ran) world.violation(node + ": " + t + " executed while its previous attempt was still running");
        boolean fuse = commit && t.commitsWithRequest() && world.rnd.nextBoolean();
        later(() -> {
            a.ran = true;
            if (a.cancelled && world.rnd.nextInt(4) != 0) { done.completed(Outcome.RETRY); return; }   // cancel is best effort
            if (world.rnd.nextDouble() < world.faults.executeRetry) { done.completed(Outcome.RETRY); return; }
            List<String> ops = MemReplica.statements(t.work().messages());
            a.versions = replica.versionsOf(MemReplica.tables(ops));
            a.error = MemReplica.run(ops, replica::get, a.writes);
            if (fuse) {
                a.fused = commitNow(t, a);
                if (a.fused == null) return;   // the site stopped
            }
            done.completed(a.error == null ? Outcome.OK : Outcome.ERROR);
        });
    }

    @Override public void cancel(Txn t) {
        Attempt a = attempts.get(t);
        if (a != null) a.cancelled = true;
    }

    @Override public void commit(Txn t, Done done) {
        Attempt a = attempts.get(t);
        if (a == null || !a.ran) {
            world.violation(node + ": COMMIT of " + t + " that has not executed");
            return;
        }
        if (a.fused != null) {
            Outcome o = a.fused;
            later(() -> done.completed(o));
            return;
        }
        later(() -> {
            Outcome o = commitNow(t, a);
            if (o != null) done.completed(o);
        });
    }

    /** The database's COMMIT; null when the connection was lost (the site then stops). */
    private Outcome commitNow(Txn t, Attempt a) {
        if (a.error != null) {   // COMMIT of a failed transaction is a rollback
            node.refused.add(t.request().id());
            return Outcome.ERROR;
        }
        if (world.rnd.nextDouble() < world.faults.commitRetry) return Outcome.RETRY;
        List<String> ops = MemReplica.statements(t.work().messages());
        if (world.rnd.nextDouble() < world.faults.connectionLost) {
            boolean committed = world.rnd.nextBoolean();
            if (committed) replica.commit(t.request().id(), a.writes);
            world.stop(node, EngineWorld.INJECTED + "connection lost during COMMIT of " + t.request().id() + " (committed: " + committed + ")");
            return null;
        }
        String deferred = MemReplica.deferred(ops, replica::get, a.writes);
        if (deferred != null) {
            node.refused.add(t.request().id());
            return Outcome.ERROR;
        }
        if (!replica.versionsOf(a.versions.keySet()).equals(a.versions))
            world.violation(node + ": " + t + " commits, but a table it used changed since it ran (" + a.versions + " now "
                    + replica.versionsOf(a.versions.keySet()) + "): the locks let a conflicting transaction through");
        node.commitsInOrder(t);
        String twice = replica.commit(t.request().id(), a.writes);
        if (twice != null) world.violation(node + ": " + twice);
        a.committed = true;
        return Outcome.OK;
    }

    @Override public void rollback(Txn t, Done done) {
        Attempt a = attempts.get(t);
        if (a != null && a.fused == Outcome.OK) world.violation(node + ": ROLLBACK of " + t + " whose COMMIT succeeded");
        later(() -> done.completed(Outcome.OK));
    }

    /** What {@code t} wrote if it committed here (its write set to ship), else null. */
    Map<String, Long> committedWrites(Txn t) {
        Attempt a = attempts.get(t);
        return a != null && a.committed ? a.writes : null;
    }

    @Override public void finish(Txn t) {
        attempts.remove(t);
    }
}
