package org.wanrep.experiments;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class CpuMeterTest {
    @Test void othersAreTheMachinesBusyTimeLessOursInCores() {
        int cpus = Runtime.getRuntime().availableProcessors();
        CpuMeter.Sample a = new CpuMeter.Sample(1000, 500, 100), b = new CpuMeter.Sample(2000, 1500, 300);
        assertThat(CpuMeter.foreignCores(a, b)).isCloseTo(0.8 * cpus, within(1e-9));
        assertThat(CpuMeter.foreignCores(a, new CpuMeter.Sample(2000, 600, 300))).isZero();   // never negative
        assertThat(CpuMeter.foreignCores(null, b)).isNaN();
    }

    @Test void onLinuxThisJvmsWorkIsOurs() {
        CpuMeter m = CpuMeter.of(List.of());
        CpuMeter.Sample a = m.sample();
        if (a == null) return;   // no /proc: nothing measured, nothing to check
        long x = 0;
        for (long end = System.nanoTime() + 300_000_000L; System.nanoTime() < end; ) x++;
        CpuMeter.Sample b = m.sample();
        assertThat(x).isNotZero();
        assertThat(b.own()).isGreaterThan(a.own());
        assertThat(b.total()).isGreaterThan(a.total());
        assertThat(b.busy() - a.busy()).isGreaterThanOrEqualTo(0);
    }
}
