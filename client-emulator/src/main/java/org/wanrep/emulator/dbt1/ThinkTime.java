package org.wanrep.emulator.dbt1;

import java.time.Duration;
import java.util.Random;

/** TPC-W think time: negative exponential with mean 7.2 s, truncated at 10 times the mean. */
public final class ThinkTime {
    public static final double MEAN_SECONDS = 7.2;
    public static final double CAP_SECONDS = 10 * MEAN_SECONDS;

    private ThinkTime() {}

    public static Duration draw(Random r) {
        // 1 - u lies in (0, 1], so the logarithm is finite
        double s = Math.min(-MEAN_SECONDS * Math.log(1 - r.nextDouble()), CAP_SECONDS);
        return Duration.ofNanos(Math.round(s * 1e9));
    }
}
