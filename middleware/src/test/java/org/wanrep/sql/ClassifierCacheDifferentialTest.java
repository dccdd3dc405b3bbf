package org.wanrep.sql;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The classifier's caches (by exact text, by shape, statement templates and whole-text templates) must give every text
 * the analysis a classifier that has seen nothing gives it: texts of a few shapes with random literals, in random
 * order, some of which refuse row keys (a fraction, an E'' string), name a setting, end in a semicolon or carry a
 * comment, so that a shape learnt from one text is applied to texts it must not fit.
 */
class ClassifierCacheDifferentialTest {
    private static final long SEED = Long.getLong("wanrep.test.seed", System.nanoTime());

    private static final String[] KEYS = {"5", "42", "'7'", "'0042'", "5.0", "' 5'", "E'5'", "1e3", "-3", "'x''y'", "N'9'", "2147483648"};
    private static final String[] STRINGS = {"'p'", "'it''s'", "E'x'", "'a\\b'", "'wanrep.ts'", "'data_directory'", "'q'", "42"};

    @Test
    void cachedAnalysesEqualFreshOnes() {
        System.out.println("ClassifierCacheDifferentialTest seed " + SEED + " (-Dwanrep.test.seed=" + SEED + " repeats it)");
        Random r = new Random(SEED);
        SqlClassifier warm = new SqlClassifier(() -> RowKeysTest.CAT, Map.of());
        int checked = 0;
        for (int i = 0; i < 1500; i++) {
            String text = text(r);
            UnitAnalysis cached = warm.analyze(List.of(text));
            UnitAnalysis fresh = new SqlClassifier(() -> RowKeysTest.CAT, Map.of()).analyze(List.of(text));
            assertThat(cached).as("seed %d, text %d: %s", SEED, i, text).isEqualTo(fresh);
            checked++;
        }
        assertThat(checked).isEqualTo(1500);
    }

    private static String text(Random r) {
        Supplier<String> key = () -> KEYS[r.nextInt(KEYS.length)];
        Supplier<String> str = () -> STRINGS[r.nextInt(STRINGS.length)];
        Supplier<String> num = () -> Integer.toString(r.nextInt(2000) - 1000);
        String stmt = switch (r.nextInt(9)) {
            case 0 -> "UPDATE accounts SET balance = balance + " + num.get() + " WHERE id = " + key.get();
            case 1 -> "SELECT balance FROM accounts WHERE id = " + key.get();
            case 2 -> "UPDATE pairs SET v = " + num.get() + " WHERE a = " + key.get() + " AND b = " + str.get();
            case 3 -> "INSERT INTO accounts (balance, id) VALUES (" + num.get() + ", " + key.get() + ")";
            case 4 -> TimeRewriting.rewrite("INSERT INTO history (tid, bid, aid, delta, mtime) VALUES (" + num.get() + ", " + num.get()
                    + ", " + num.get() + ", " + num.get() + ", CURRENT_TIMESTAMP)");
            case 5 -> "DELETE FROM accounts WHERE id IN (" + key.get() + ", " + key.get() + ")";
            case 6 -> "UPDATE accounts SET balance = 1 WHERE id = " + key.get() + " AND current_setting(" + str.get() + ", true) = 'x'";
            case 7 -> "UPDATE accounts SET balance = balance + " + num.get() + " WHERE id = " + key.get()
                    + "; SELECT balance FROM accounts WHERE id = " + key.get();
            default -> "SELECT balance FROM accounts WHERE id = " + key.get() + " FOR UPDATE";
        };
        String before = switch (r.nextInt(4)) {
            case 0 -> "/* c " + num.get() + " */ ";
            case 1 -> "-- note\n";
            default -> "";
        };
        String after = switch (r.nextInt(5)) {
            case 0 -> ";";
            case 1 -> " ;\n";
            case 2 -> ";;";
            case 3 -> "; -- done";
            default -> "";
        };
        return before + stmt + after;
    }
}
