package org.wanrep.txn;

import org.junit.jupiter.api.Test;
import org.wanrep.lock.LockMode;
import org.wanrep.lock.TableSet;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class RowPositionsTest {
    private static final String T = "public.acc";
    private static final TableSet NOTHING = TableSet.of(Set.of(), Set.of());

    private static TableSet keyed(String table, Map<String, LockMode> keys) {
        return new TableSet(Set.of(table), Set.of(table), false, Map.of(table, keys));
    }

    private static String row(String k) { return T + TableSet.ROW + k; }

    @Test
    void anUpdateOrDeleteByKeyOfOneTableQualifies() {
        TableSet one = keyed(T, Map.of("5", LockMode.WRITE));
        assertThat(RowPositions.untouchedKeyedRows(List.of("UPDATE acc SET bal = bal + 1 WHERE id = 5"), one, NOTHING)).containsExactly(row("5"));
        assertThat(RowPositions.untouchedKeyedRows(List.of("  delete from acc where id = 5;"), one, NOTHING)).containsExactly(row("5"));
        TableSet two = keyed(T, Map.of("5", LockMode.WRITE, "6", LockMode.WRITE));
        assertThat(RowPositions.untouchedKeyedRows(List.of("UPDATE acc SET bal = 0 WHERE id IN (5, 6) RETURNING bal"), two, NOTHING))
                .containsExactlyInAnyOrder(row("5"), row("6"));
    }

    @Test
    void whatReadsOnItsSnapshotDoesNot() {
        TableSet one = keyed(T, Map.of("5", LockMode.WRITE));
        // a subquery reads on the statement's snapshot, not the newest version: a lost update if it counted
        assertThat(RowPositions.untouchedKeyedRows(List.of("UPDATE acc SET bal = (SELECT bal FROM acc WHERE id = 5) + 1 WHERE id = 5"), one, NOTHING)).isEmpty();
        assertThat(RowPositions.untouchedKeyedRows(List.of("WITH x AS (SELECT 1) UPDATE acc SET bal = 1 WHERE id = 5"), one, NOTHING)).isEmpty();
        assertThat(RowPositions.untouchedKeyedRows(List.of("UPDATE acc SET bal = 1 WHERE id = 5; UPDATE acc SET bal = 2 WHERE id = 5"), one, NOTHING)).isEmpty();
        assertThat(RowPositions.untouchedKeyedRows(List.of("INSERT INTO acc VALUES (5, 1)"), one, NOTHING)).isEmpty();
        assertThat(RowPositions.untouchedKeyedRows(List.of("UPDATE acc SET bal = 1 WHERE id = 5", "UPDATE acc SET bal = 1 WHERE id = 5"), one, NOTHING)).isEmpty();
        // another table read (UPDATE ... FROM), a read of a row, the whole table, everything
        TableSet join = new TableSet(Set.of(T, "public.other"), Set.of(T), false, Map.of(T, Map.of("5", LockMode.WRITE)));
        assertThat(RowPositions.untouchedKeyedRows(List.of("UPDATE acc SET bal = o.v FROM other o WHERE acc.id = 5"), join, NOTHING)).isEmpty();
        assertThat(RowPositions.untouchedKeyedRows(List.of("UPDATE acc SET bal = 1 WHERE id = 5"), keyed(T, Map.of("5", LockMode.READ)), NOTHING)).isEmpty();
        assertThat(RowPositions.untouchedKeyedRows(List.of("UPDATE acc SET bal = 1 WHERE bal > 5"), TableSet.of(Set.of(T), Set.of(T)), NOTHING)).isEmpty();
        assertThat(RowPositions.untouchedKeyedRows(List.of("UPDATE acc SET bal = 1 WHERE id = 5"), TableSet.allTables(), NOTHING)).isEmpty();
    }

    @Test
    void aRowTheBlockTouchedBeforeKeepsTheSnapshotsPosition() {
        TableSet both = keyed(T, Map.of("5", LockMode.WRITE, "6", LockMode.WRITE));
        TableSet readFive = new TableSet(Set.of(T), Set.of(), false, Map.of(T, Map.of("5", LockMode.READ)));
        assertThat(RowPositions.untouchedKeyedRows(List.of("UPDATE acc SET bal = 1 WHERE id IN (5, 6)"), both, readFive)).containsExactly(row("6"));
        // the table read whole before (a scan): it may have read any row on its older snapshot
        assertThat(RowPositions.untouchedKeyedRows(List.of("UPDATE acc SET bal = 1 WHERE id IN (5, 6)"), both, TableSet.of(Set.of(T), Set.of()))).isEmpty();
    }

    @Test
    void onlyWhenEveryNamedRowWasModified() {
        TableSet two = keyed(T, Map.of("5", LockMode.WRITE, "6", LockMode.WRITE));
        assertThat(RowPositions.modifiedAll("UPDATE 2", 2, two)).isTrue();
        assertThat(RowPositions.modifiedAll("DELETE 2", 1, two)).isTrue();
        assertThat(RowPositions.modifiedAll("UPDATE 1", 2, two)).as("a key without a row locked nothing").isFalse();
        assertThat(RowPositions.modifiedAll("SELECT 2", 2, two)).isFalse();
        assertThat(RowPositions.modifiedAll(null, 2, two)).isFalse();
    }

    /** The hand-written first look and tag reading agree with the regular expressions they replaced, on random texts. */
    @Test
    void firstWordAndTagAgreeWithTheExpressions() {
        long seed = Long.getLong("wanrep.test.seed", System.nanoTime());
        System.out.println("RowPositionsTest seed " + seed + " (-Dwanrep.test.seed=" + seed + " repeats it)");
        java.util.Random r = new java.util.Random(seed);
        java.util.regex.Pattern dml = java.util.regex.Pattern.compile("\\s*(update|delete)\\s", java.util.regex.Pattern.CASE_INSENSITIVE);
        java.util.regex.Pattern tag = java.util.regex.Pattern.compile("(UPDATE|DELETE) (\\d+)");
        String[] parts = {" ", "\t", "\n", "\u000B", "\u00A0", "update", "UPDATE", "UpDaTe", "delete", "DELETE", "deletes", "updat", "insert", "x",
                "\u017Fet", "1", "12", "0", "-", "UPDATE ", "DELETE ", "INSERT 0 ", "99999999999999999999", "\u0661"};
        int matched = 0;
        for (int i = 0; i < 50_000; i++) {
            StringBuilder b = new StringBuilder();
            for (int k = r.nextInt(4); k >= 0; k--) b.append(parts[r.nextInt(parts.length)]);
            String text = b.toString();
            boolean expected = dml.matcher(text).lookingAt();
            assertThat(RowPositions.startsUpdateOrDelete(text)).as("seed %d: [%s]", seed, text).isEqualTo(expected);
            if (expected) matched++;
            var m = tag.matcher(text);
            int named = r.nextInt(3);
            TableSet t = new TableSet(Set.of(), Set.of("public.t"), false, Map.of("public.t", named == 0 ? Map.of() : named == 1
                    ? Map.of("1", LockMode.WRITE) : Map.of("1", LockMode.WRITE, "2", LockMode.WRITE)));
            boolean tagExpected = m.matches() && m.group(2).length() <= 18 && Long.parseLong(m.group(2)) == named;
            assertThat(RowPositions.modifiedAll(text, 1, t)).as("seed %d: tag [%s], %d named", seed, text, named).isEqualTo(tagExpected);
        }
        assertThat(matched).isGreaterThan(1000);
        assertThat(RowPositions.modifiedAll("UPDATE 2", 1, new TableSet(Set.of(), Set.of("public.t"), false,
                Map.of("public.t", Map.of("1", LockMode.WRITE, "2", LockMode.WRITE))))).isTrue();
    }
}
