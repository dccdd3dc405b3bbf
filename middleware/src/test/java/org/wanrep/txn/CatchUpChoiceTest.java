package org.wanrep.txn;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Replay or copy, from the estimates and from what the site measured. */
class CatchUpChoiceTest {
    private static final long MB = 1024 * 1024;

    @Test
    void aLargeGapInASmallReplicaIsCopiedAndASmallGapInALargeOneReplayed() {
        CatchUpChoice c = new CatchUpChoice(250, 20);
        // pgbench scale 10 (~160 MB, ~11 s to copy) after a 60 s partition under 400/s: 19,000 to replay (~76 s)
        assertThat(c.copyFirst(19_000, 160 * MB)).isTrue();
        assertThat(c.copyFirst(1_000, 160 * MB)).as("4 s of replay").isFalse();
        assertThat(c.copyFirst(100_000, 100_000 * MB)).as("100 GB: a replay of 400 s is shorter").isFalse();
        assertThat(c.copyFirst(19_000, -1)).as("size unknown: replay").isFalse();
        assertThat(CatchUpChoice.replayAlways().copyFirst(10_000_000, 1)).isFalse();
    }

    @Test
    void measuredRatesReplaceTheSettings() {
        CatchUpChoice c = new CatchUpChoice(250, 20);
        assertThat(c.copyFirst(5_000, 160 * MB)).as("20 s of replay against 11 s of copy").isTrue();
        c.replayed(20_000, 10_000);   // this site replays 2,000 per second
        assertThat(c.copyFirst(5_000, 160 * MB)).as("2.5 s of replay").isFalse();
        c.transferred(160 * MB, 3_000 + 1_000);   // and copies 160 MB/s
        assertThat(c.transferSeconds(160 * MB)).isCloseTo(4.0, org.assertj.core.data.Offset.offset(0.01));
        assertThat(c.copyFirst(20_000, 160 * MB)).as("10 s of replay against 4 s of copy").isTrue();
        c.replayed(10, 1);   // too short to say anything
        assertThat(c.replaySeconds(2_000)).isCloseTo(1.0, org.assertj.core.data.Offset.offset(0.01));
    }
}
