package org.wanrep.sql;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

import static org.assertj.core.api.Assertions.assertThat;

/** The replicated clock's literal, written by hand, against java.time's formatter over a wide range of instants. */
class TimeRewritingFormatTest {
    private static final DateTimeFormatter TS = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSS").withZone(ZoneOffset.UTC);

    private static String byFormatter(long micros) {
        return TS.format(Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000)) + "+00";
    }

    @Test
    void sameTextAsTheFormatter() {
        long seed = Long.getLong("wanrep.timeformat.seed", System.nanoTime());
        System.out.println("TimeRewritingFormatTest seed " + seed + " (-Dwanrep.timeformat.seed=" + seed + " repeats it)");
        java.util.Random rnd = new java.util.Random(seed);
        long[] fixed = {0, 1, 999_999, 1_000_000, -1, -1_000_001, 1_796_000_000_123_456L, 253_402_300_799_999_999L,
                253_402_300_800_000_000L, -30_610_224_000_000_000L, -30_610_224_000_000_001L, 1_000_000_000_000_000L};
        for (long m : fixed) assertThat(TimeRewriting.format(m)).as("%d", m).isEqualTo(byFormatter(m));
        for (int i = 0; i < 100_000; i++) {
            long m = rnd.nextLong(-40_000_000_000_000_000L, 300_000_000_000_000_000L);
            assertThat(TimeRewriting.format(m)).as("seed %d: %d", seed, m).isEqualTo(byFormatter(m));
        }
    }
}
