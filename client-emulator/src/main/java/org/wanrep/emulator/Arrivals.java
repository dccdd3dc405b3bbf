package org.wanrep.emulator;

import java.util.Random;

/** When an open-loop emulator's transactions are due, relative to the start of its schedule. */
public enum Arrivals {
    /** One transaction every 1/rate seconds, the study's emulator. */
    FIXED,
    /** Exponential gaps of mean 1/rate: independent arrivals, as from many unrelated clients. */
    POISSON;

    /**
     * Due times in nanoseconds from the start for {@code n} transactions at {@code rate} per second.
     * Fixed times are computed from the index, not summed, so they never drift.
     */
    public long[] schedule(int n, double rate, Random r) {
        long[] due = new long[n];
        double mean = 1e9 / rate, t = 0;
        for (int k = 0; k < n; k++) {
            if (this == FIXED) {
                due[k] = Math.round(k * mean);
            } else {
                if (k > 0) t += -Math.log(1 - r.nextDouble()) * mean;
                due[k] = Math.round(t);
            }
        }
        return due;
    }

    public String label() { return name().toLowerCase(java.util.Locale.ROOT); }
}
