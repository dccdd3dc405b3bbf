package org.wanrep.lock;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class LockManagerTest {
    static final class Recorder implements LockManager.Listener {
        final List<Object> granted = new ArrayList<>(), revoked = new ArrayList<>();
        public void granted(Object t) { granted.add(t); }
        public void revoked(Object t) { revoked.add(t); }
    }

    private static TableSet w(String... t) { return TableSet.of(Set.of(), Set.of(t)); }
    private static TableSet r(String... t) { return TableSet.of(Set.of(t), Set.of()); }

    @Test
    void conflictingTransactionsRunInDeliveryOrderOthersShare() {
        Recorder rec = new Recorder();
        LockManager lm = new LockManager(rec);
        lm.enqueueFinal("T1", w("x"));
        lm.enqueueFinal("T2", r("x"));
        lm.enqueueFinal("T3", r("x"));
        lm.enqueueFinal("T4", r("y"));
        assertThat(rec.granted).containsExactly("T1", "T4");
        lm.release("T1");
        assertThat(rec.granted).containsExactly("T1", "T4", "T2", "T3");
    }

    /** All locks are enqueued at once: T3 waits behind T2 on y although y is free, as at every other site. */
    @Test
    void locksAreEnqueuedAtomically() {
        Recorder rec = new Recorder();
        LockManager lm = new LockManager(rec);
        lm.enqueueFinal("T1", w("x"));
        lm.enqueueFinal("T2", w("x", "y"));
        lm.enqueueFinal("T3", w("y"));
        assertThat(rec.granted).containsExactly("T1");
        lm.release("T1");
        assertThat(rec.granted).containsExactly("T1", "T2");
        lm.release("T2");
        assertThat(rec.granted).containsExactly("T1", "T2", "T3");
    }

    @Test
    void allTablesExcludesEveryone() {
        Recorder rec = new Recorder();
        LockManager lm = new LockManager(rec);
        lm.enqueueFinal("T1", r("x"));
        lm.enqueueFinal("DDL", TableSet.allTables());
        lm.enqueueFinal("T3", r("z"));
        assertThat(rec.granted).containsExactly("T1");
        lm.release("T1");
        assertThat(rec.granted).containsExactly("T1", "DDL");
        lm.release("DDL");
        assertThat(rec.granted).containsExactly("T1", "DDL", "T3");
    }

    @Test
    void finalDeliveryOvertakesAndRevokesATentativeConflict() {
        Recorder rec = new Recorder();
        LockManager lm = new LockManager(rec);
        lm.enqueueTentative("T1", w("x"));
        assertThat(rec.granted).containsExactly("T1");
        lm.enqueueTentative("T2", w("x"));
        lm.makeFinal("T2");                       // final order: T2 before T1
        assertThat(rec.revoked).containsExactly("T1");
        assertThat(rec.granted).containsExactly("T1", "T2");
        lm.makeFinal("T1");
        lm.release("T2");
        assertThat(rec.granted).containsExactly("T1", "T2", "T1");
    }

    /**
     * A final entry enqueued without an optimistic delivery (an interactive block's exclusive lock, a
     * local read lock, a final delivery after a view change) overtakes tentative entries too: a
     * conflicting tentative grant must be revoked, or both would run at once.
     */
    @Test
    void finalEnqueueRevokesATentativeConflictItOvertakes() {
        Recorder rec = new Recorder();
        LockManager lm = new LockManager(rec);
        lm.enqueueTentative("T1", w("x"));
        lm.enqueueTentative("T2", r("y"));
        assertThat(rec.granted).containsExactly("T1", "T2");
        lm.enqueueFinal("BLOCK", TableSet.allTables());
        assertThat(rec.revoked).containsExactlyInAnyOrder("T1", "T2");
        assertThat(rec.granted).containsExactly("T1", "T2", "BLOCK");
        lm.enqueueFinal("R", r("x"));             // compatible with nothing granted ahead of it but BLOCK
        lm.release("BLOCK");
        assertThat(rec.granted).containsExactly("T1", "T2", "BLOCK", "R", "T2");
        assertThat(lm.isGranted("T1")).isFalse(); // still behind R's read lock on x
    }

    @Test
    void tentativeNonConflictingWorkIsKept() {
        Recorder rec = new Recorder();
        LockManager lm = new LockManager(rec);
        lm.enqueueTentative("T1", r("x"));
        lm.enqueueTentative("T2", r("x"));
        lm.makeFinal("T2");
        lm.makeFinal("T1");
        assertThat(rec.revoked).isEmpty();
        assertThat(rec.granted).containsExactly("T1", "T2");
    }

    private static TableSet rows(String table, LockMode mode, String... keys) {
        java.util.Map<String, LockMode> k = new java.util.HashMap<>();
        for (String key : keys) k.put(key, mode);
        return new TableSet(mode == LockMode.WRITE ? Set.of() : Set.of(table), mode == LockMode.WRITE ? Set.of(table) : Set.of(), false, java.util.Map.of(table, k));
    }

    @Test
    void rowsOfDifferentKeysShareTheTableSameKeyConflicts() {
        Recorder rec = new Recorder();
        LockManager lm = new LockManager(rec);
        lm.enqueueFinal("A5", rows("acc", LockMode.WRITE, "5"));
        lm.enqueueFinal("A6", rows("acc", LockMode.WRITE, "6"));
        lm.enqueueFinal("B5", rows("acc", LockMode.WRITE, "5"));
        lm.enqueueFinal("R6", rows("acc", LockMode.READ, "6", "7"));
        lm.enqueueFinal("R7", rows("acc", LockMode.READ, "7"));
        assertThat(rec.granted).containsExactly("A5", "A6", "R7");
        lm.release("A5");
        assertThat(rec.granted).containsExactly("A5", "A6", "R7", "B5");
        lm.release("A6");
        assertThat(rec.granted).containsExactly("A5", "A6", "R7", "B5", "R6");
    }

    /** A statement that shows no rows locks the table and so conflicts with every row lock of it, in delivery order. */
    @Test
    void wholeTableLocksConflictWithRowLocksThroughIntentions() {
        Recorder rec = new Recorder();
        LockManager lm = new LockManager(rec);
        lm.enqueueFinal("W5", rows("acc", LockMode.WRITE, "5"));
        lm.enqueueFinal("SCAN", r("acc"));            // a range scan reads every row: waits for the row writer
        lm.enqueueFinal("R6", rows("acc", LockMode.READ, "6"));   // row reader shares with the scan
        lm.enqueueFinal("W7", rows("acc", LockMode.WRITE, "7"));  // row writer waits for the scan
        lm.enqueueFinal("OTHER", w("other"));
        assertThat(rec.granted).containsExactly("W5", "R6", "OTHER");
        lm.release("W5");
        assertThat(rec.granted).containsExactly("W5", "R6", "OTHER", "SCAN");
        lm.enqueueFinal("ALL", w("acc"));             // whole-table writer: behind everyone on acc
        lm.release("SCAN");
        assertThat(rec.granted).containsExactly("W5", "R6", "OTHER", "SCAN", "W7");
        lm.release("R6");
        lm.release("W7");
        assertThat(rec.granted).containsExactly("W5", "R6", "OTHER", "SCAN", "W7", "ALL");
    }

    /** An opt-safe overtaking final row lock revokes a tentative grant only if it hits the same row or the whole table. */
    @Test
    void finalRowLockRevokesOnlyConflictingTentativeRows() {
        Recorder rec = new Recorder();
        LockManager lm = new LockManager(rec);
        lm.enqueueTentative("T5", rows("acc", LockMode.WRITE, "5"));
        lm.enqueueTentative("T6", rows("acc", LockMode.WRITE, "6"));
        lm.enqueueTentative("SCAN", r("other"));
        assertThat(rec.granted).containsExactly("T5", "T6", "SCAN");
        lm.enqueueFinal("F6", rows("acc", LockMode.WRITE, "6"));
        assertThat(rec.revoked).containsExactly("T6");
        lm.enqueueFinal("FALL", r("acc"));
        assertThat(rec.revoked).containsExactly("T6", "T5");
    }

    /**
     * Random table sets, optimistic order a random shuffle of the final order; a transaction commits
     * when granted and final. Conflicting transactions must commit in final order, and all commit.
     */
    @Test
    void randomizedOptimisticOrdersCommitInFinalOrder() {
        long seed = Long.getLong("wanrep.lock.seed", new Random().nextLong());
        System.out.println("lock manager randomized seed " + seed);
        Random rnd = new Random(seed);
        for (int run = 0; run < 300; run++) {
            int n = 2 + rnd.nextInt(30);
            List<TableSet> sets = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                if (rnd.nextInt(20) == 0) { sets.add(TableSet.allTables()); continue; }
                Set<String> rs = new HashSet<>(), ws = new HashSet<>();
                for (int k = 0; k < 1 + rnd.nextInt(3); k++) (rnd.nextBoolean() ? rs : ws).add("t" + rnd.nextInt(5));
                sets.add(TableSet.of(rs, ws));
            }
            List<Integer> opt = new ArrayList<>();
            for (int i = 0; i < n; i++) opt.add(i);
            for (int i = 0; i < n; i++) if (rnd.nextInt(3) == 0 && i + 1 < n) java.util.Collections.swap(opt, i, i + 1 + rnd.nextInt(Math.min(3, n - i - 1)));
            List<Integer> commits = new ArrayList<>();
            boolean[] fin = new boolean[n], granted = new boolean[n];
            int[] commitsAtGrant = new int[n];   // how many had committed when t was last granted
            LockManager[] holder = new LockManager[1];
            List<Integer> toCommit = new ArrayList<>();
            holder[0] = new LockManager(new LockManager.Listener() {
                public void granted(Object t) {
                    granted[(Integer) t] = true;
                    commitsAtGrant[(Integer) t] = commits.size();
                    if (fin[(Integer) t]) toCommit.add((Integer) t);
                }
                public void revoked(Object t) { granted[(Integer) t] = false; }
            });
            LockManager lm = holder[0];
            int nextOpt = 0, nextFinal = 0;
            java.util.Set<Integer> enq = new HashSet<>();
            while (commits.size() < n) {
                boolean doOpt = nextOpt < n && (nextFinal >= n || rnd.nextBoolean());
                if (doOpt) {
                    int t = opt.get(nextOpt++);
                    if (enq.add(t)) lm.enqueueTentative(t, sets.get(t));
                } else if (nextFinal < n) {
                    int t = nextFinal++;
                    fin[t] = true;
                    if (enq.add(t)) lm.enqueueFinal(t, sets.get(t));
                    else { lm.makeFinal(t); if (granted[t] && !toCommit.contains(t) && !commits.contains(t)) toCommit.add(t); }
                }
                while (!toCommit.isEmpty()) {
                    int t = toCommit.remove(0);
                    if (!granted[t] || commits.contains(t)) continue;
                    // it ran on the state its grant saw: every conflicting predecessor must be in it
                    for (int j = 0; j < t; j++)
                        if (conflict(sets.get(j), sets.get(t)))
                            assertThat(commits.subList(0, commitsAtGrant[t])).as("seed %d run %d: %d granted before %d committed", seed, run, t, j).contains(j);
                    commits.add(t);
                    lm.release(t);
                }
                if (nextOpt >= n && nextFinal >= n && commits.size() < n && toCommit.isEmpty())
                    throw new AssertionError("seed " + seed + " run " + run + ": stuck with " + commits.size() + "/" + n + " committed");
            }
            for (int i = 0; i < n; i++)
                for (int j = i + 1; j < n; j++)
                    if (conflict(sets.get(i), sets.get(j)))
                        assertThat(commits.indexOf(i)).as("seed %d run %d: %d and %d conflict", seed, run, i, j).isLessThan(commits.indexOf(j));
            assertThat(lm.size()).isZero();
        }
    }

    private static boolean conflict(TableSet a, TableSet b) {
        if (a.all() || b.all()) return true;
        for (String x : a.writes()) if (b.writes().contains(x) || b.reads().contains(x)) return true;
        for (String x : b.writes()) if (a.reads().contains(x)) return true;
        return false;
    }
}
