package org.wanrep.checker;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** 100,000 transactions must check in well under a minute, even on a shared 2-core machine. */
class CheckerScaleTest {
    @Test void hundredThousandTransactions() {
        long seed = Long.getLong("seed", System.nanoTime());   // -Dseed=N reruns a printed seed
        System.out.println("seed " + seed);
        History h = Histories.randomSerializable(seed, 100_000, 16);
        long t0 = System.nanoTime();
        CheckResult r = new ListAppendChecker(ListAppendChecker.Options.defaults().withRealtime(true)).check(h);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        System.out.println("checked " + r.transactions() + " transactions in " + ms + " ms: " + r.counts());
        assertThat(r.transactions()).isGreaterThan(100_000);
        assertThat(r.anomalies()).as("seed %d", seed).isEmpty();
        assertThat(ms).as("seed %d", seed).isLessThan(60_000);
    }

    /** Stale reads everywhere: large strongly connected components; the search must stay bounded and name cycles. */
    @Test void manyCyclesStayFast() {
        long seed = Long.getLong("seed", System.nanoTime());   // -Dseed=N reruns a printed seed
        System.out.println("seed " + seed);
        History h = Histories.random(seed, 50_000, 16, true);
        long t0 = System.nanoTime();
        CheckResult r = new ListAppendChecker().check(h);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        System.out.println("checked " + r.transactions() + " transactions in " + ms + " ms: " + r.counts() + ", "
                + r.nontrivialComponents() + " components with cycles, truncated " + r.searchTruncated());
        assertThat(r.valid()).as("seed %d", seed).isFalse();
        assertThat(r.counts().keySet()).as("seed %d", seed).containsAnyOf("G-single", "G2", "G-single-process", "G2-process");
        assertThat(ms).as("seed %d", seed).isLessThan(60_000);
    }
}
