package org.wanrep.txn;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** The comparison of outcomes, without a group: three (or two) sites fed by hand, each finishing GSNs in its own order. */
class OutcomeDigestsTest {
    /** Delivers GSNs {@code from..to} to {@code d} and finishes them in a shuffled order; outcome(g) = {@code work[g]}. */
    private static OutcomeDigests.Range run(OutcomeDigests d, long from, long to, long[] work, long seed) {
        List<Long> order = new ArrayList<>();
        for (long g = from; g <= to; g++) {
            d.seen(g);
            order.add(g);
        }
        Collections.shuffle(order, new Random(seed));
        for (long g : order) d.finished(g, OutcomeDigests.outcome(true, work[(int) g]));
        return d.advance(to);
    }

    private static long[] work(int n) {
        long[] w = new long[n + 1];
        for (int i = 0; i <= n; i++) w[i] = i * 31L;
        return w;
    }

    @Test
    void sitesThatAgreeFindNothingWhateverTheirReportsRanges() {
        long seed = System.nanoTime();
        System.out.println("seed " + seed);
        OutcomeDigests a = new OutcomeDigests(1024), b = new OutcomeDigests(1024);
        long[] w = work(100);
        OutcomeDigests.Range a1 = run(a, 1, 40, w, seed), b1 = run(b, 1, 25, w, seed + 1);
        OutcomeDigests.Range a2 = run(a, 41, 100, w, seed + 2), b2 = run(b, 26, 100, w, seed + 3);
        for (OutcomeDigests.Range r : List.of(a1, a2)) assertThat(b.remote("a", r)).isEmpty();
        for (OutcomeDigests.Range r : List.of(b1, b2)) assertThat(a.remote("b", r)).isEmpty();
        assertThat(a.compared()).isEqualTo(2);
        assertThat(b.compared()).isEqualTo(2);
        assertThat(a.mustStop(2)).isFalse();
    }

    @Test
    void theSiteTheMajorityDisagreesWithStopsAndOnlyIt() {
        long[] same = work(50), odd = work(50);
        odd[17] = 12345;   // e.g. it committed an insert the others refused
        OutcomeDigests a = new OutcomeDigests(1024), b = new OutcomeDigests(1024), c = new OutcomeDigests(1024);
        OutcomeDigests.Range ra = run(a, 1, 50, odd, 1), rb = run(b, 1, 50, same, 2), rc = run(c, 1, 50, same, 3);
        assertThat(b.remote("a", ra)).singleElement().satisfies(x -> assertThat(x.member()).isEqualTo("a"));
        assertThat(b.remote("c", rc)).isEmpty();
        assertThat(c.remote("a", ra)).hasSize(1);
        assertThat(c.remote("b", rb)).isEmpty();
        assertThat(a.remote("b", rb)).hasSize(1);
        assertThat(a.mustStop(3)).as("a after one report").isFalse();   // one of three: not yet half the view
        assertThat(a.remote("c", rc)).hasSize(1);
        assertThat(a.mustStop(3)).isTrue();
        assertThat(b.mustStop(3)).isFalse();
        assertThat(c.mustStop(3)).isFalse();
        // two sites that differ: nobody can tell which is right, both stop
        assertThat(b.mustStop(2)).isTrue();
    }

    @Test
    void aReportAheadOfThisSiteIsComparedOnceThisSiteGotThere() {
        long[] same = work(60), odd = work(60);
        odd[55] = 7;
        OutcomeDigests a = new OutcomeDigests(1024), b = new OutcomeDigests(1024);
        OutcomeDigests.Range ra = run(a, 1, 60, odd, 4);
        run(b, 1, 30, same, 5);
        assertThat(b.remote("a", ra)).isEmpty();   // b finished up to 30 only: kept
        assertThat(b.compared()).isZero();
        run(b, 31, 60, same, 6);
        assertThat(b.recheck()).hasSize(1);
    }

    @Test
    void gsnsThisSiteDidNotExecuteAreNeverCompared() {
        long[] same = work(80), odd = work(80);
        odd[10] = 99;   // a's GSN 10 differs, but b had GSNs up to 20 from a copy: b cannot judge them
        OutcomeDigests a = new OutcomeDigests(1024), b = new OutcomeDigests(1024);
        OutcomeDigests.Range ra1 = run(a, 1, 40, odd, 7), ra2 = run(a, 41, 80, odd, 8);
        for (long g = 1; g <= 20; g++) {   // in the state transferred to b: delivered, not executed
            b.seen(g);
            b.skipped(g);
        }
        OutcomeDigests.Range rb1 = run(b, 21, 40, same, 9);
        assertThat(rb1.from()).isEqualTo(20);
        assertThat(b.remote("a", ra1)).isEmpty();   // (0, 40] includes what b did not execute: not compared
        assertThat(b.remote("a", ra2)).isEmpty();   // (40, 80]: compared once b got there, and alike
        run(b, 41, 80, same, 10);
        assertThat(b.recheck()).isEmpty();
        assertThat(b.compared()).isEqualTo(1);
        // a compares b's (20, 40], which misses a's odd GSN 10
        assertThat(a.remote("b", rb1)).isEmpty();
    }

    @Test
    void aNewHistoryStartsAfresh() {
        long[] w = work(30);
        OutcomeDigests a = new OutcomeDigests(1024);
        run(a, 1, 30, w, 11);
        OutcomeDigests.Range r = run(a, 1, 10, w, 12);   // every site restarted: GSNs count from 1 again
        assertThat(r).isEqualTo(new OutcomeDigests.Range(0, 10, run(new OutcomeDigests(1024), 1, 10, w, 13).digest()));
    }

    @Test
    void membersThatLeftNoLongerCount() {
        long[] same = work(20), odd = work(20);
        odd[3] = 1;
        OutcomeDigests a = new OutcomeDigests(1024);
        OutcomeDigests.Range mine = run(a, 1, 20, same, 14);
        OutcomeDigests b = new OutcomeDigests(1024);
        OutcomeDigests.Range theirs = run(b, 1, 20, odd, 15);
        assertThat(mine).isNotEqualTo(theirs);
        assertThat(a.remote("b", theirs)).hasSize(1);
        a.retain(List.of("a", "c", "d"));
        assertThat(a.mustStop(3)).isFalse();
        assertThat(a.differing()).isEmpty();
    }
}
