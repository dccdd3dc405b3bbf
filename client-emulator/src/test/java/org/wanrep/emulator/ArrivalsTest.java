package org.wanrep.emulator;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class ArrivalsTest {
    @Test void fixedArrivalsAreEvenlySpacedWithoutDrift() {
        long[] due = Arrivals.FIXED.schedule(3001, 3000, null);
        assertThat(due[0]).isZero();
        assertThat(due[1]).isEqualTo(333_333);
        assertThat(due[3000]).isEqualTo(1_000_000_000L);
    }

    @Test void poissonGapsAreExponentialWithTheMeanOfTheRate() {
        long seed = new Random().nextLong();
        System.out.println("ArrivalsTest seed " + seed);
        int n = 20_000;
        long[] due = Arrivals.POISSON.schedule(n, 100, new Random(seed));
        double mean = due[n - 1] / (double) (n - 1), sq = 0;
        for (int k = 1; k < n; k++) {
            double g = due[k] - due[k - 1];
            assertThat(g).isGreaterThanOrEqualTo(0);
            sq += (g - mean) * (g - mean);
        }
        double sd = Math.sqrt(sq / (n - 2));
        assertThat(mean).isCloseTo(1e7, within(0.05 * 1e7));
        assertThat(sd / mean).isCloseTo(1.0, within(0.05));   // exponential: standard deviation = mean
    }

    @Test void aRunOfSeveralEmulatorsInterleavesTheirSchedules() {
        Load.Open total = new Load.Open(100, Arrivals.FIXED);
        Load.Open second = (Load.Open) total.share(1, 4);
        assertThat(second.rateTps()).isEqualTo(25);
        assertThat(second.offset().toMillis()).isEqualTo(10);
        assertThat(((Load.Closed) new Load.Closed(10, null).share(1, 4)).clients()).isEqualTo(3);
        assertThat(((Load.Closed) new Load.Closed(10, null).share(3, 4)).clients()).isEqualTo(2);
    }
}
