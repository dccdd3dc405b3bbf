package org.wanrep.checker;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.wanrep.checker.MicroOp.append;
import static org.wanrep.checker.MicroOp.read;

/** Builds histories for tests: by hand (one transaction at a time, or overlapping), or random serializable ones. */
final class Histories {
    final History h = new History();
    private long nextTxn = 1;
    private long clock;

    /** Invokes a transaction (reads without results); complete it with {@link #complete}. */
    long invoke(int process, MicroOp... ops) {
        long id = nextTxn++;
        List<MicroOp> inv = new ArrayList<>();
        for (MicroOp o : ops) inv.add(o.isRead() ? read(o.key()) : o);
        h.add(Event.invoke(process, id, clock++, inv));
        return id;
    }

    void complete(long txn, int process, OpType type, MicroOp... ops) {
        h.add(Event.complete(process, txn, type, clock++, List.of(ops)));
    }

    long ok(int process, MicroOp... ops) {
        long id = invoke(process, ops);
        complete(id, process, OpType.OK, ops);
        return id;
    }

    long fail(int process, MicroOp... ops) {
        long id = invoke(process, ops);
        complete(id, process, OpType.FAIL, ops);
        return id;
    }

    long info(int process, MicroOp... ops) {
        long id = invoke(process, ops);
        complete(id, process, OpType.INFO, ops);
        return id;
    }

    /**
     * A random serializable (indeed strictly serializable) history: {@code processes} clients with overlapping
     * transactions, each applied atomically to an in-memory store at its completion; about 4% fail (not applied),
     * about 3% end unknown (applied or not, at random; the process is then replaced, as Jepsen does). Keys are retired
     * after a few dozen appends so lists stay short, as Elle's generator does. Ends with a final read of every key.
     */
    static History randomSerializable(long seed, int txns, int processes) {
        return random(seed, txns, processes, false);
    }

    /** As {@link #randomSerializable}, but with {@code staleReads} each read returns a random prefix of the list: not serializable. */
    static History random(long seed, int txns, int processes, boolean staleReads) {
        Random rnd = new Random(seed);
        Histories b = new Histories();
        Map<Long, List<Long>> store = new HashMap<>();
        long[] active = new long[20];
        int[] writes = new int[active.length];
        long nextKey = 0;
        for (int i = 0; i < active.length; i++) active[i] = nextKey++;
        long nextValue = 1;
        int[] procOf = new int[processes];
        for (int i = 0; i < processes; i++) procOf[i] = i;
        int nextProc = processes;
        long[] pending = new long[processes];
        List<List<MicroOp>> pendingOps = new ArrayList<>();
        for (int i = 0; i < processes; i++) pendingOps.add(null);
        int invoked = 0;
        while (invoked < txns || pendingOps.stream().anyMatch(x -> x != null)) {
            int slot = rnd.nextInt(processes);
            if (pendingOps.get(slot) == null) {
                if (invoked >= txns) continue;
                List<MicroOp> ops = new ArrayList<>();
                int n = 1 + rnd.nextInt(4);
                for (int j = 0; j < n; j++) {
                    int ki = rnd.nextInt(active.length);
                    if (rnd.nextBoolean()) {
                        ops.add(append(active[ki], nextValue++));
                        if (++writes[ki] > 20 + (active[ki] % 40)) { active[ki] = nextKey++; writes[ki] = 0; }
                    } else ops.add(read(active[ki]));
                }
                pending[slot] = b.invoke(procOf[slot], ops.toArray(new MicroOp[0]));
                pendingOps.set(slot, ops);
                invoked++;
            } else {
                List<MicroOp> ops = pendingOps.get(slot);
                int r = rnd.nextInt(100);
                OpType type = r < 4 ? OpType.FAIL : r < 7 ? OpType.INFO : OpType.OK;
                boolean apply = type == OpType.OK || (type == OpType.INFO && rnd.nextBoolean());
                List<MicroOp> done = new ArrayList<>();
                for (MicroOp o : ops) {
                    List<Long> l = store.computeIfAbsent(o.key(), k -> new ArrayList<>());
                    if (o.isAppend()) {
                        if (apply) l.add(o.value());
                        done.add(o);
                    } else {
                        int upTo = staleReads && !l.isEmpty() ? rnd.nextInt(l.size() + 1) : l.size();
                        done.add(o.withRead(l.subList(0, upTo).stream().mapToLong(Long::longValue).toArray()));
                    }
                }
                if (!apply) { // undo: appends of a transaction that did not commit
                    for (MicroOp o : ops) if (o.isAppend()) store.get(o.key()).remove(o.value());
                }
                b.complete(pending[slot], procOf[slot], type, done.toArray(new MicroOp[0]));
                if (type == OpType.INFO) procOf[slot] = nextProc++;
                pendingOps.set(slot, null);
            }
        }
        for (Map.Entry<Long, List<Long>> e : store.entrySet())
            b.ok(nextProc, read(e.getKey(), e.getValue().stream().mapToLong(Long::longValue).toArray()));
        return b.h;
    }
}
