package org.wanrep.txn;

import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The pacing of origins while a member catches up, on a simulated clock: eight closed-loop clients at an
 * origin could order 400 updates per second; the joiner applies 300 per second and starts 20,000 behind.
 */
class CatchUpPacerTest {
    private static final long MS = 1_000_000L;

    /** What a simulated run ended with. */
    private record Outcome(long lagAtEnd, long caughtUpAtMs, long fewestAdmittedIn5s, long admitted) {}

    private static Outcome run(boolean pace, long seconds) {
        CatchUpPacer p = new CatchUpPacer();
        int clients = 8;
        long serviceNanos = 20 * MS;   // a client's request takes 20 ms once admitted: 8 clients -> 400/s
        double applyPerSecond = 300;
        long[] ready = new long[clients];
        double lag = 20_000, done = 0;
        long caughtUp = -1, admitted = 0, admittedInWindow = 0, fewest = Long.MAX_VALUE;
        long end = seconds * 1000 * MS, step = MS;
        for (long now = 0; now < end; now += step) {
            for (int c = 0; c < clients; c++) {
                if (ready[c] > now) continue;
                long delay = pace ? p.admit(now) : 0;
                // the update is ordered when its turn comes; the joiner queues it behind its replay
                ready[c] = now + delay + serviceNanos;
                lag++;
                admitted++;
                admittedInWindow++;
            }
            double applied = Math.min(lag, applyPerSecond * step / 1e9);
            lag -= applied;
            done += applied;
            if (now % (50 * MS) == 0) p.lag("c-1", lag > 20 ? (long) lag : 0, (long) done, now);   // the joiner's report
            if (lag <= 20 && caughtUp < 0) caughtUp = now / MS;
            if (now % (5000 * MS) == 0 && now > 0) {
                fewest = Math.min(fewest, admittedInWindow);
                admittedInWindow = 0;
            }
        }
        Outcome o = new Outcome((long) lag, caughtUp, fewest, admitted);
        System.out.println((pace ? "paced: " : "not paced: ") + o);
        return o;
    }

    @Test
    void aJoinerThatAppliesSlowerThanTheOthersOrderNeverCatchesUpWithoutPacing() {
        Outcome o = run(false, 120);
        assertThat(o.caughtUpAtMs()).isEqualTo(-1);
        assertThat(o.lagAtEnd()).isGreaterThan(20_000);
    }

    @Test
    void pacedOriginsLetItCatchUpAndKeepAcknowledgingMeanwhile() {
        Outcome o = run(true, 120);
        assertThat(o.caughtUpAtMs()).as("caught up within 120 s").isBetween(1L, 120_000L);
        assertThat(o.fewestAdmittedIn5s()).as("no 5 s window without admitted updates").isGreaterThanOrEqualTo((long) (5 * CatchUpPacer.MIN_RATE) - 1);
        // the others keep a share of the joiner's pace meanwhile (a quarter of its 300 per second, on average)
        assertThat(o.admitted()).isGreaterThan(120L * 75);
    }

    @Test
    void aJoinerThatNeverShrinksItsLagSlowsTheOthersToAQuarterAtMost() {
        CatchUpPacer p = new CatchUpPacer();
        for (long t = 0; t < 2000 * MS; t += 5 * MS) p.admit(t);   // ~200 per second before
        for (long t = 2000 * MS; t < 60_000 * MS; t += 50 * MS) p.lag("c-1", 10_000, 0, t);   // stuck
        assertThat(p.rate()).isBetween(0.25 * 190, 0.25 * 210);
    }

    @Test
    void pacingStopsWhenTheMemberServesOrLeaves() {
        CatchUpPacer p = new CatchUpPacer();
        for (long t = 0; t < 2000 * MS; t += 10 * MS) p.admit(t);   // ~100 per second before
        p.lag("c-1", 5000, 100, 2000 * MS);
        assertThat(p.rate()).as("starts from what the origin did").isBetween(50.0, 150.0);
        p.lag("c-1", 6000, 200, 2600 * MS);
        assertThat(p.rate()).as("the lag grew: slower").isLessThan(100.0);
        assertThat(p.admit(2600 * MS) + p.admit(2600 * MS)).isGreaterThan(0);
        p.lag("c-1", 0, 0, 2700 * MS);
        assertThat(p.rate()).isZero();
        assertThat(p.admit(2700 * MS)).isZero();

        p.lag("c-1", 5000, 300, 3000 * MS);
        assertThat(p.rate()).isPositive();
        p.retain(Set.of("a-1", "b-1"));
        assertThat(p.rate()).as("a member that left slows no one").isZero();
    }
}
