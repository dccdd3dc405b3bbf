package org.wanrep.lock;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The incremental {@link LockManager} against the full-rescan {@link ReferenceLockManager} it
 * replaced: on seeded random operation sequences (tentative and final enqueues, final deliveries,
 * releases of granted and waiting entries) both must report the same grants and revocations in
 * the same order, and agree on every transaction's state. Seed: {@code -Dwanrep.lock.seed=N}.
 */
class LockManagerDifferentialTest {
    @Test
    void incrementalGrantsMatchTheFullRescan() {
        long seed = Long.getLong("wanrep.lock.seed", new Random().nextLong());
        System.out.println("lock manager differential seed " + seed);
        Random rnd = new Random(seed);
        for (int run = 0; run < 400; run++) {
            List<String> got = new ArrayList<>(), want = new ArrayList<>();
            LockManager lm = new LockManager(recorder(got));
            ReferenceLockManager ref = new ReferenceLockManager(recorder(want));
            int tables = 1 + rnd.nextInt(6), ops = 20 + rnd.nextInt(300);
            List<Integer> live = new ArrayList<>(), tentative = new ArrayList<>();
            int next = 0;
            for (int op = 0; op < ops; op++) {
                int kind = rnd.nextInt(10);
                String what;
                if (kind < 4 || live.isEmpty()) {
                    int t = next++;
                    TableSet ts = randomSet(rnd, tables);
                    boolean fin = rnd.nextBoolean();
                    what = (fin ? "enqueueFinal " : "enqueueTentative ") + t + " " + ts;
                    if (fin) { lm.enqueueFinal(t, ts); ref.enqueueFinal(t, ts); }
                    else { lm.enqueueTentative(t, ts); ref.enqueueTentative(t, ts); tentative.add(t); }
                    live.add(t);
                } else if (kind < 6 && !tentative.isEmpty()) {
                    Integer t = tentative.remove(rnd.nextInt(tentative.size()));
                    what = "makeFinal " + t;
                    lm.makeFinal(t);
                    ref.makeFinal(t);
                } else {
                    // mostly granted ones (commits), sometimes waiting ones (aborts, lock timeouts)
                    Integer t = live.get(rnd.nextInt(live.size()));
                    for (int k = 0; k < 3 && !ref.isGranted(t); k++) t = live.get(rnd.nextInt(live.size()));
                    what = "release " + t;
                    live.remove(t);
                    tentative.remove(t);
                    lm.release(t);
                    ref.release(t);
                }
                String ctx = "seed " + seed + " run " + run + " op " + op + " (" + what + ")";
                assertThat(got).as(ctx).containsExactlyElementsOf(want);
                assertThat(lm.waiting()).as(ctx).isEqualTo(ref.waiting());
                assertThat(lm.size()).as(ctx).isEqualTo(ref.size());
                assertThat(lm.queueLengths()).as(ctx).isEqualTo(LockManager.summarize(ref.queueLengths()));
                for (Integer t : live) assertThat(lm.isGranted(t)).as(ctx + " txn " + t).isEqualTo(ref.isGranted(t));
            }
        }
    }

    private static TableSet randomSet(Random rnd, int tables) {
        if (rnd.nextInt(25) == 0) return TableSet.allTables();
        Set<String> rs = new HashSet<>(), ws = new HashSet<>();
        java.util.Map<String, java.util.Map<String, LockMode>> rows = new java.util.HashMap<>();
        int k = rnd.nextInt(4);   // zero tables: only the shared read of everything
        for (int i = 0; i < k; i++) {
            String t = "t" + rnd.nextInt(tables);
            boolean write = rnd.nextInt(3) == 0;
            (write ? ws : rs).add(t);
            if (rnd.nextBoolean()) {   // by rows: intention locks on the table, row locks on few keys
                var keys = rows.computeIfAbsent(t, x -> new java.util.HashMap<>());
                for (int j = rnd.nextInt(3); j > 0; j--) keys.merge("k" + rnd.nextInt(4), write ? LockMode.WRITE : LockMode.READ, LockMode::join);
            }
        }
                return new TableSet(rs, ws, false, rows);
    }

    private static LockManager.Listener recorder(List<String> log) {
        return new LockManager.Listener() {
            public void granted(Object t) { log.add("granted " + t); }
            public void revoked(Object t) { log.add("revoked " + t); }
        };
    }
}
