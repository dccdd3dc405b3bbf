package org.wanrep.txn.sim;

import org.wanrep.gcs.Delivery;
import org.wanrep.txn.RequestId;
import org.wanrep.txn.Txn;
import org.wanrep.txn.TxnExecutor;
import org.wanrep.txn.WriteSetIo;
import org.wanrep.txn.WriteSetMessage;
import org.wanrep.txn.WriteSetMessageCodec;
import org.wanrep.writeset.ColumnValue;
import org.wanrep.writeset.RowChange;
import org.wanrep.writeset.WriteSet;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Write sets for the write-set policies over a {@link MemReplica}: the executing site ships the rows
 * its commit wrote (one {@link RowChange} per key) with RELIABLE delivery after a capture delay; the
 * others apply them at a random latency, sometimes refused for a transient reason (RETRY), rarely
 * for good (ERROR: the engine must then stop the site). A site that committed but cannot ship stops.
 */
final class MemWriteSetIo implements WriteSetIo {
    private final EngineWorld world;
    private final EngineWorld.SiteNode node;

    MemWriteSetIo(EngineWorld world, EngineWorld.SiteNode node) {
        this.world = world;
        this.node = node;
    }

    static WriteSet writeSet(String tag, Map<String, Long> writes) {
        List<RowChange> rows = new ArrayList<>();
        for (var e : new java.util.TreeMap<>(writes).entrySet())
            rows.add(new RowChange("public", MemReplica.tableOf(e.getKey()), RowChange.Action.UPDATE,
                    List.of(new ColumnValue("k", "text", e.getKey())), List.of(new ColumnValue("v", "bigint", e.getValue().toString()))));
        return new WriteSet(tag, rows);
    }

    static Map<String, Long> writes(WriteSet ws) {
        Map<String, Long> w = new HashMap<>();
        for (RowChange r : ws.rows()) w.put(r.key().get(0).value(), Long.parseLong(r.values().get(0).value()));
        return w;
    }

    @Override public void ship(Txn t) {
        RequestId id = t.request().id();
        Map<String, Long> committed = node.executor.committedWrites(t);   // null: it failed (deterministically)
        WriteSetMessage m = new WriteSetMessage(id, node.member, committed != null, List.of(),
                committed == null ? null : writeSet(t.captureTag(), committed), Map.of());
        byte[] payload = WriteSetMessageCodec.encode(m);
        world.sim.schedule(1 + world.rnd.nextInt(world.maxLatencyMs), () -> {   // the capture's delay
            if (!node.serving()) return;
            try {
                world.sim.send(node.member, Delivery.RELIABLE, payload);
            } catch (RuntimeException e) {
                world.stop(node, "site " + node.site + " executed " + id + " for every site but cannot ship its write set: " + e.getMessage());
            }
        });
    }

    @Override public void apply(Txn t, WriteSetMessage m, TxnExecutor.Done done) {
        world.sim.schedule(1 + world.rnd.nextInt(world.maxLatencyMs), () -> {
            if (!node.serving()) return;
            if (world.rnd.nextDouble() < world.faults.executeRetry) { done.completed(TxnExecutor.Outcome.RETRY); return; }
            if (world.rnd.nextDouble() < world.faults.applyError) {
                node.injectedApplyError = true;
                done.completed(TxnExecutor.Outcome.ERROR);
                return;
            }
            node.commitsInOrder(t);
            String twice = node.replica.commit(t.request().id(), writes(m.writeSet()));
            if (twice != null) world.violation(node + ": " + twice + " (write set from " + m.executor() + ")");
            done.completed(TxnExecutor.Outcome.OK);
        });
    }
}
