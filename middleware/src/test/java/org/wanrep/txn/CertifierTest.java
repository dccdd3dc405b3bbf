package org.wanrep.txn;

import org.junit.jupiter.api.Test;
import org.wanrep.lock.LockMode;
import org.wanrep.lock.TableSet;

import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class CertifierTest {
    private static TableSet rows(String table, Map<String, LockMode> keys) {
        boolean writes = keys.containsValue(LockMode.WRITE);
        return new TableSet(Set.of(table), writes ? Set.of(table) : Set.of(), false, Map.of(table, keys));
    }

    private static TableSet union(TableSet... s) {
        TableSet u = s[0];
        for (int i = 1; i < s.length; i++) u = TableSet.union(u, s[i]);
        return u;
    }

    @Test
    void writeSkewAbortsTheSecondBlockNotOnlyWriteWriteConflicts() {
        // x and y both 1 at GSN 5; block 1 reads x, writes y; block 2 reads y, writes x: disjoint writes (SI commits both)
        Certifier c = new Certifier(100);
        TableSet b1 = union(rows("t", Map.of("x", LockMode.READ)), rows("t", Map.of("y", LockMode.WRITE)));
        TableSet b2 = union(rows("t", Map.of("y", LockMode.READ)), rows("t", Map.of("x", LockMode.WRITE)));
        assertThat(c.certify(6, 5, b1).commit()).isTrue();
        Certifier.Decision d = c.certify(7, 5, b2);
        assertThat(d.commit()).isFalse();
        assertThat(d.reason()).contains("t row y").contains("GSN 6");
    }

    @Test
    void rowsConflictOnlyOnTheSameKey() {
        Certifier c = new Certifier(100);
        c.delivered(11, rows("public.acc", Map.of("1", LockMode.WRITE)));
        assertThat(c.certify(12, 10, rows("public.acc", Map.of("2", LockMode.WRITE))).commit()).isTrue();
        assertThat(c.certify(13, 10, rows("public.acc", Map.of("1", LockMode.READ))).commit()).as("read of a row written after the snapshot").isFalse();
        assertThat(c.certify(14, 10, rows("public.acc", Map.of("2", LockMode.READ))).commit()).as("written by the block at GSN 12").isFalse();
        assertThat(c.certify(15, 12, rows("public.acc", Map.of("2", LockMode.READ))).commit()).as("GSN 12 is in its snapshot").isTrue();
    }

    @Test
    void aRowLockedAtItsNewestVersionConflictsOnlyWithWritesAfterItsPosition() {
        TableSet block = rows("public.acc", Map.of("1", LockMode.WRITE, "2", LockMode.WRITE));
        String row1 = "public.acc" + TableSet.ROW + "1", row2 = "public.acc" + TableSet.ROW + "2";
        // snapshot 10: GSN 11 wrote row 1, but the block locked row 1 when everything up to 12 had written
        assertThat(history().certify(20, 10, block, Map.of(row1, 12L, row2, 13L)).commit()).isTrue();
        // row 2 was locked when only 12 had: GSN 13's write of it came after, unseen
        Certifier.Decision x = history().certify(20, 10, block, Map.of(row1, 12L, row2, 12L));
        assertThat(x.commit()).isFalse();
        assertThat(x.reason()).contains("row 2").contains("GSN 13");
        // a row without a position keeps the snapshot's
        assertThat(history().certify(20, 10, block, Map.of(row2, 19L)).commit()).isFalse();
        // a write of the whole table is not a row's: a position does not help
        Certifier f = new Certifier(100);
        for (long g = 10; g < 20; g++) f.delivered(g, g == 11 ? TableSet.of(Set.of("public.acc"), Set.of("public.acc")) : TableSet.of(Set.of(), Set.of()));
        assertThat(f.certify(20, 10, block, Map.of(row1, 19L, row2, 19L)).commit()).isFalse();
    }

    /** GSNs 10 to 19 delivered; 11 wrote row 1 of public.acc, 13 row 2. */
    private static Certifier history() {
        Certifier c = new Certifier(100);
        for (long g = 10; g < 20; g++)
            c.delivered(g, g == 11 ? rows("public.acc", Map.of("1", LockMode.WRITE)) : g == 13 ? rows("public.acc", Map.of("2", LockMode.WRITE)) : TableSet.of(Set.of(), Set.of()));
        return c;
    }

    @Test
    void deliveriesUpToTheSnapshotAreNotConcurrent() {
        Certifier c = new Certifier(100);
        c.delivered(3, TableSet.allTables());
        c.delivered(4, TableSet.of(Set.of(), Set.of("t")));
        assertThat(c.certify(5, 4, TableSet.of(Set.of("t"), Set.of("t"))).commit()).isTrue();
        assertThat(c.certify(6, 3, TableSet.of(Set.of("t"), Set.of())).commit()).as("table write at GSN 4").isFalse();
        assertThat(c.certify(7, 2, TableSet.of(Set.of("u"), Set.of("u"))).commit()).as("GSN 3 wrote every table").isFalse();
    }

    @Test
    void tableLevelOnEitherSideConflictsWithEveryRow() {
        Certifier c = new Certifier(100);
        c.delivered(2, TableSet.of(Set.of("t"), Set.of("t")));   // an update without a key: the whole table
        assertThat(c.certify(3, 1, rows("t", Map.of("9", LockMode.READ))).commit()).isFalse();
        c.delivered(4, rows("u", Map.of("9", LockMode.WRITE)));
        assertThat(c.certify(5, 3, TableSet.of(Set.of("u"), Set.of())).commit()).as("a scan of u").isFalse();
        assertThat(c.certify(6, 3, TableSet.of(Set.of("v"), Set.of("v"))).commit()).as("another table").isTrue();
        assertThat(c.certify(7, 6, TableSet.allTables()).commit()).as("nothing after its snapshot").isTrue();
        assertThat(c.certify(8, 6, TableSet.of(Set.of("w"), Set.of())).commit()).as("the block at 7 reached every table").isFalse();
    }

    @Test
    void readOnlyDeliveriesAndReadsOfTheOthersDoNotConflict() {
        Certifier c = new Certifier(100);
        c.delivered(2, TableSet.of(Set.of("t"), Set.of()));
        c.delivered(3, TableSet.of(Set.of("t"), Set.of("u")));   // read t (the block writes it): serialized before the block
        assertThat(c.certify(4, 1, TableSet.of(Set.of("t"), Set.of("t"))).commit()).isTrue();
    }

    @Test
    void aSnapshotOlderThanTheWindowAbortsAtEverySiteAlike() {
        Certifier a = new Certifier(2), b = new Certifier(2);
        for (Certifier c : new Certifier[]{a, b}) {
            c.delivered(1, TableSet.of(Set.of(), Set.of("x")));
            c.delivered(2, TableSet.of(Set.of(), Set.of("y")));
            c.delivered(3, TableSet.of(Set.of(), Set.of("z")));   // evicts GSN 1
        }
        for (Certifier c : new Certifier[]{a, b}) {
            Certifier.Decision d = c.certify(4, 0, TableSet.of(Set.of("q"), Set.of("q")));
            assertThat(d.commit()).isFalse();
            assertThat(d.reason()).contains("older than the certification window");
            assertThat(c.certify(5, 1, TableSet.of(Set.of("q"), Set.of("q"))).commit()).isTrue();
        }
    }

    @Test
    void randomSequencesDecideLikeAFullHistory() {
        long seed = Long.getLong("wanrep.certifier.seed", System.nanoTime());
        System.out.println("CertifierTest seed " + seed);
        java.util.Random rnd = new java.util.Random(seed);
        Certifier c = new Certifier(1_000_000);
        java.util.List<long[]> history = new java.util.ArrayList<>();   // gsn, table, key (-1: whole table), written
        java.util.List<TableSet> sets = new java.util.ArrayList<>();
        for (long gsn = 1; gsn <= 2000; gsn++) {
            int table = rnd.nextInt(3);
            String t = "t" + table;
            boolean whole = rnd.nextInt(5) == 0;
            int key = rnd.nextInt(20);
            boolean write = rnd.nextBoolean();
            TableSet s = whole ? TableSet.of(Set.of(t), write ? Set.of(t) : Set.of())
                    : rows(t, Map.of(Integer.toString(key), write ? LockMode.WRITE : LockMode.READ));
            if (rnd.nextBoolean()) {
                c.delivered(gsn, s);
                history.add(new long[]{gsn, table, whole ? -1 : key, write ? 1 : 0});
            } else {
                long snap = Math.max(0, gsn - 1 - rnd.nextInt(30));
                boolean expected = true;
                for (long[] h : history)
                    if (h[0] > snap && h[3] == 1 && h[1] == table && (h[2] == -1 || whole || h[2] == key)) expected = false;
                assertThat(c.certify(gsn, snap, s).commit()).as("gsn %d seed %d", gsn, seed).isEqualTo(expected);
                if (expected) history.add(new long[]{gsn, table, whole ? -1 : key, write ? 1 : 0});
            }
            sets.add(s);
        }
    }

    /** A certifier that started (a site restarted) after a block's snapshot cannot know what came between: no decision. */
    @Test
    void aCertifierStartedAfterTheSnapshotDoesNotDecide() {
        Certifier restarted = new Certifier(100);
        restarted.seen(41);   // its first delivery since it started
        restarted.delivered(41, TableSet.of(Set.of(), Set.of("u")));
        assertThat(restarted.certify(42, 30, TableSet.of(Set.of("t"), Set.of("t")))).isNull();
        // a snapshot it has seen everything since is decided as anywhere else
        assertThat(restarted.certify(43, 40, TableSet.of(Set.of("t"), Set.of("t"))).commit()).isTrue();
        Certifier fresh = new Certifier(100);
        fresh.seen(1);
        assertThat(fresh.certify(2, 0, TableSet.of(Set.of("t"), Set.of("t"))).commit()).isTrue();
    }
    @Test
    void aTableWrittenByMoreKeysThanItKeepsConflictsWhole() {
        Map<String, LockMode> keys = new java.util.HashMap<>();
        for (int k = 0; k < Certifier.MAX_KEYS; k++) keys.put("k" + k, LockMode.WRITE);
        Certifier c = new Certifier(100);
        c.delivered(11, rows("t", keys));
        assertThat(c.certify(12, 10, rows("t", Map.of("x", LockMode.READ))).commit()).as("%d keys are kept", Certifier.MAX_KEYS).isTrue();
        assertThat(c.certify(13, 10, rows("t", Map.of("k7", LockMode.READ))).commit()).isFalse();
        keys.put("one more", LockMode.WRITE);
        c.delivered(14, rows("t", keys));
        Certifier.Decision d = c.certify(15, 13, rows("t", Map.of("x", LockMode.READ)));
        assertThat(d.commit()).isFalse();
        assertThat(d.reason()).contains("a write of table t").contains("GSN 14");
    }

    @Test
    void theWindowKeepsNoneOfADeliverysLockSet() throws Exception {
        Certifier c = new Certifier(100);
        TableSet s = union(rows("public.acc", Map.of("1", LockMode.WRITE)), TableSet.of(Set.of("public.hist"), Set.of("public.hist")));
        java.lang.ref.WeakReference<TableSet> ref = new java.lang.ref.WeakReference<>(s);
        c.delivered(11, s);
        s = null;
        for (int i = 0; i < 50 && ref.get() != null; i++) {
            System.gc();
            Thread.sleep(20);
        }
        assertThat(ref.get() == null).as("the window keeps what the delivery wrote, not its lock set").isTrue();
        assertThat(c.certify(12, 10, rows("public.acc", Map.of("1", LockMode.READ))).reason()).contains("public.acc row 1").contains("GSN 11");
        assertThat(c.certify(13, 10, rows("public.acc", Map.of("2", LockMode.READ))).commit()).isTrue();
        assertThat(c.certify(14, 10, TableSet.of(Set.of("public.hist"), Set.of())).reason()).contains("a write of table public.hist");
    }
}
