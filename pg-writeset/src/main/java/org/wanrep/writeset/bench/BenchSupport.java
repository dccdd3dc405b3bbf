package org.wanrep.writeset.bench;

import org.HdrHistogram.Histogram;

import java.util.Locale;

/** Formatting shared by the write-set benchmarks: microsecond histograms, a table row, a JSON field. */
final class BenchSupport {
    private BenchSupport() {}

    static Histogram histogram() { return new Histogram(60_000_000L, 3); }   // microseconds, up to a minute

    static double ms(double micros) { return micros / 1000.0; }

    static String row(String name, Histogram h) {
        return String.format(Locale.ROOT, "%-34s %8d %9.3f %9.3f %9.3f %9.3f %9.3f", name, h.getTotalCount(),
                ms(h.getValueAtPercentile(50)), ms(h.getValueAtPercentile(99)), ms(h.getMean()), ms(h.getMinValue()), ms(h.getMaxValue()));
    }

    static String header() {
        return String.format(Locale.ROOT, "%-34s %8s %9s %9s %9s %9s %9s", "measure (ms)", "n", "p50", "p99", "mean", "min", "max");
    }

    static String json(String name, Histogram h) {
        return String.format(Locale.ROOT, "\"%s\":{\"n\":%d,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"mean_ms\":%.3f,\"max_ms\":%.3f}", name,
                h.getTotalCount(), ms(h.getValueAtPercentile(50)), ms(h.getValueAtPercentile(99)), ms(h.getMean()), ms(h.getMaxValue()));
    }

    static int intArg(String[] args, String name, int dflt) {
        for (int i = 0; i + 1 < args.length; i++) if (args[i].equals(name)) return Integer.parseInt(args[i + 1]);
        return dflt;
    }
}
