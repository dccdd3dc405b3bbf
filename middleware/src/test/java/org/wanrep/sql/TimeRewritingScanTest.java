package org.wanrep.sql;

import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.regex.Matcher;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rewrite tries its regular expression only where a time word or pg_catalog begins; it must replace exactly what a
 * search of the expression from every position replaces: random code made of time calls, near misses (a qualified
 * name, a longer word, a dollar sign) and filler.
 */
class TimeRewritingScanTest {
    private static final String[] PARTS = {"now()", "NOW ( )", "pg_catalog.now()", "PG_CATALOG . current_timestamp(3)", "x.now()", "snow()",
            "now_x()", "current_date", "current_time", "Current_Time (6)", "localtime(2)", "localtimestamp", "LocalTimeStamp ( 1 )",
            "transaction_timestamp()", "transaction_timestamp", "current_timestampz", "$now()", "now", "_now()", "now$", "pg_catalog",
            "pg_catalog.", "pg_catalognow()", "current_", "local", " ", "  ", ",", "(", ")", ".", "abc", "1", "\n", "t", "c", "p", "l"};

    /** The rewrite as it was: the expression searched from every position. */
    private static String bySearch(String code, String ts) {
        Matcher m = TimeRewriting.FUNCS.matcher(code);
        StringBuilder b = new StringBuilder();
        while (m.find()) m.appendReplacement(b, Matcher.quoteReplacement(TimeRewriting.literal(m.group(1), ts)));
        m.appendTail(b);
        return b.toString();
    }

    @Test
    void replacesWhatASearchFromEveryPositionReplaces() {
        long seed = Long.getLong("wanrep.test.seed", System.nanoTime());
        System.out.println("TimeRewritingScanTest seed " + seed + " (-Dwanrep.test.seed=" + seed + " repeats it)");
        Random r = new Random(seed);
        int changed = 0;
        for (int i = 0; i < 20_000; i++) {
            StringBuilder code = new StringBuilder();
            for (int k = r.nextInt(8); k >= 0; k--) code.append(PARTS[r.nextInt(PARTS.length)]);
            String c = code.toString(), expected = bySearch(c, "TS");
            assertThat(TimeRewriting.rewriteCode(c, "TS")).as("seed %d: %s", seed, c).isEqualTo(expected);
            if (!expected.equals(c)) changed++;
        }
        assertThat(changed).as("texts with a time call among them").isGreaterThan(1000);
    }
}
