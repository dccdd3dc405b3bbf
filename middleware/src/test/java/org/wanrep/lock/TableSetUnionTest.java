package org.wanrep.lock;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A request's statements are united at once: the same lock set as the pairwise fold the classifier used before, kept
 * here as the reference (a table row-level in one set and reached without rows in the other is locked whole).
 */
class TableSetUnionTest {
    @Test
    void unitingAllAtOnceGivesThePairwiseFold() {
        long seed = Long.getLong("seed", System.nanoTime());
        System.out.println("TableSetUnionTest seed " + seed + " (-Dseed=" + seed + " repeats it)");
        Random rnd = new Random(seed);
        for (int round = 0; round < 5_000; round++) {
            List<TableSet> sets = new ArrayList<>();
            int n = 1 + rnd.nextInt(6);
            for (int i = 0; i < n; i++) sets.add(randomSet(rnd));
            TableSet folded = sets.get(0);
            for (int i = 1; i < n; i++) folded = pairwise(folded, sets.get(i));
            assertThat(TableSet.union(sets)).as("seed %d round %d: %s", seed, round, sets).isEqualTo(folded);
            assertThat(TableSet.union(sets).resources()).isEqualTo(folded.resources());
            if (n == 2) assertThat(TableSet.union(sets.get(0), sets.get(1))).isEqualTo(folded);
            // one at a time, as a certifying block adds its statements' sets, asked between the additions too
            TableSet.Union u = new TableSet.Union();
            for (int i = 0; i < n; i++) {
                u.add(sets.get(i));
                TableSet sofar = TableSet.union(sets.subList(0, i + 1));
                assertThat(u.toTableSet()).as("seed %d round %d after %d", seed, round, i + 1).isEqualTo(sofar);
                assertThat(u.all()).isEqualTo(sofar.all());
                for (String t : List.of("a", "b", "c", "d")) {
                    if (sofar.all()) continue;
                    assertThat(u.rowsOf(t)).as("seed %d round %d: rows of %s", seed, round, t).isEqualTo(sofar.rows().get(t));
                    assertThat(u.touches(t)).isEqualTo(sofar.reads().contains(t) || sofar.writes().contains(t));
                }
            }
        }
    }

    /** The pairwise union as it was written before the one-pass union replaced it. */
    private static TableSet pairwise(TableSet a, TableSet b) {
        if (a.all() || b.all()) return TableSet.allTables();
        Set<String> r = new HashSet<>(a.reads()), w = new HashSet<>(a.writes());
        r.addAll(b.reads());
        w.addAll(b.writes());
        Map<String, Map<String, LockMode>> rows = new HashMap<>();
        Set<String> tables = new HashSet<>(r);
        tables.addAll(w);
        tables.addAll(a.rows().keySet());
        tables.addAll(b.rows().keySet());
        for (String t : tables) {
            boolean inA = touches(a, t), inB = touches(b, t);
            if ((inA && !a.rows().containsKey(t)) || (inB && !b.rows().containsKey(t))) continue;   // whole table somewhere
            Map<String, LockMode> keys = new HashMap<>(a.rows().getOrDefault(t, Map.of()));
            b.rows().getOrDefault(t, Map.of()).forEach((k, m) -> keys.merge(k, m, LockMode::join));
            rows.put(t, keys);
        }
        return new TableSet(r, w, false, rows);
    }

    private static boolean touches(TableSet s, String t) { return s.reads().contains(t) || s.writes().contains(t) || s.rows().containsKey(t); }

    private static TableSet randomSet(Random rnd) {
        if (rnd.nextInt(30) == 0) return TableSet.allTables();
        String[] tables = {"a", "b", "c", "d"};
        Set<String> reads = new HashSet<>(), writes = new HashSet<>();
        Map<String, Map<String, LockMode>> rows = new HashMap<>();
        for (String t : tables) {
            switch (rnd.nextInt(5)) {
                case 0 -> reads.add(t);
                case 1 -> writes.add(t);
                case 2 -> {   // row-level: the table named as read or written, with its keys
                    if (rnd.nextBoolean()) writes.add(t); else reads.add(t);
                    Map<String, LockMode> keys = new HashMap<>();
                    for (int k = rnd.nextInt(3); k >= 0; k--) keys.put(Integer.toString(rnd.nextInt(4)), rnd.nextBoolean() ? LockMode.WRITE : LockMode.READ);
                    rows.put(t, keys);
                }
                case 3 -> rows.put(t, Map.of(Integer.toString(rnd.nextInt(4)), LockMode.WRITE));   // rows only
                default -> { }
            }
        }
        return new TableSet(reads, writes, false, rows);
    }
}
