package org.wanrep.emulator;

import org.HdrHistogram.Histogram;
import org.wanrep.emulator.report.PhaseRow;
import org.wanrep.emulator.report.SiteResult;
import org.wanrep.emulator.report.TypeResult;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/** Turns transaction logs into results: per type and for all types, over the measured transactions. */
final class Statistics {
    private Statistics() {}

    static final String ALL = "all";
    private static final long HIGHEST_US = 3_600_000_000L;   // an hour

    /**
     * One result from one or more logs (one per emulator). Counts and histograms add up over the
     * logs; throughput and achieved rate are each log's over its own window, summed.
     */
    static SiteResult of(String site, String target, String load, Double targetRate, List<TxnLog> logs, List<PhaseRow> phases, String phasesNote) {
        List<String> types = logs.get(0).types;
        int all = types.size();
        Histogram[] resp = new Histogram[all + 1], lag = new Histogram[all + 1];
        for (int t = 0; t <= all; t++) {
            resp[t] = new Histogram(HIGHEST_US, 3);
            lag[t] = new Histogram(HIGHEST_US, 3);
        }
        long[] measured = new long[all + 1], committed = new long[all + 1], aborts = new long[all + 1], retries = new long[all + 1],
                late = new long[all + 1];
        double[] throughput = new double[all + 1];
        String[] lastError = new String[all + 1];
        long transactions = 0, warm = 0, cool = 0, unfinished = 0, lateAll = 0;
        double achieved = 0, window = 0;
        // why measured starts were late: the schedule's thread woke late, or no connection was free
        Histogram dispatchLag = new Histogram(HIGHEST_US, 3), connectionWait = new Histogram(HIGHEST_US, 3);
        for (TxnLog log : logs) {
            transactions += log.n;
            warm += log.warmup;
            cool += log.cooldown;
            long lateNanos = log.lateNanos();
            long[] inWindow = new long[all + 1];
            long firstStart = Long.MAX_VALUE, lastStart = Long.MIN_VALUE, started = 0;
            for (int k = 0; k < log.n; k++) {
                int t = log.type[k];
                boolean isStarted = log.start[k] != 0;
                if (isStarted && log.start[k] - log.due[k] > lateNanos) lateAll++;
                if (log.status[k] == TxnLog.PENDING) unfinished++;
                if (log.status[k] == TxnLog.COMMITTED && log.end[k] >= log.windowStart && log.end[k] < log.windowEnd) {
                    inWindow[t]++;
                    inWindow[all]++;
                }
                if (!log.measured(k)) continue;
                for (int i : new int[]{t, all}) {
                    measured[i]++;
                    retries[i] += log.retries[k];
                    if (log.status[k] == TxnLog.COMMITTED) {
                        committed[i]++;
                        resp[i].recordValue(micros(log.end[k] - log.due[k]));
                    } else if (log.status[k] == TxnLog.ABORTED) {
                        aborts[i]++;
                    }
                    if (isStarted) {
                        lag[i].recordValue(micros(log.start[k] - log.due[k]));
                        if (log.start[k] - log.due[k] > lateNanos) late[i]++;
                    }
                }
                if (isStarted) {
                    dispatchLag.recordValue(micros(log.dispatched[k] - log.due[k]));
                    connectionWait.recordValue(micros(log.start[k] - log.dispatched[k]));
                    started++;
                    firstStart = Math.min(firstStart, log.start[k]);
                    lastStart = Math.max(lastStart, log.start[k]);
                }
            }
            double w = (log.windowEnd - log.windowStart) / 1e9;
            window = Math.max(window, w);
            for (int t = 0; t <= all; t++) if (w > 0) throughput[t] += inWindow[t] / w;
            if (started > 1 && lastStart > firstStart) achieved += (started - 1) * 1e9 / (lastStart - firstStart);
            for (int t = 0; t < all; t++) {
                String e = log.lastError.get(t);
                if (e != null) lastError[t] = lastError[all] = e;
            }
        }
        List<TypeResult> perType = new ArrayList<>();
        for (int t = 0; t < all; t++) perType.add(type(types.get(t), t, measured, committed, aborts, retries, throughput, resp, lag, late, lastError));
        TypeResult total = type(ALL, all, measured, committed, aborts, retries, throughput, resp, lag, late, lastError);
        return new SiteResult(site, target, load, targetRate == null ? null : round(targetRate), round(achieved), transactions, warm, cool,
                unfinished, lateAll, ms(dispatchLag.getValueAtPercentile(99)), ms(connectionWait.getValueAtPercentile(99)), round(window), total, perType,
                phases, phasesNote);
    }

    private static TypeResult type(String name, int t, long[] measured, long[] committed, long[] aborts, long[] retries, double[] throughput,
                                   Histogram[] resp, Histogram[] lag, long[] late, String[] lastError) {
        Histogram h = resp[t], l = lag[t];
        return new TypeResult(name, measured[t], committed[t], aborts[t], retries[t], round(throughput[t]),
                ms(h.getTotalCount() == 0 ? 0 : h.getMean()), ms(h.getValueAtPercentile(50)), ms(h.getValueAtPercentile(90)),
                ms(h.getValueAtPercentile(99)), ms(h.getMaxValue()),
                late[t], ms(l.getValueAtPercentile(50)), ms(l.getValueAtPercentile(99)), ms(l.getMaxValue()),
                lastError[t], encode(h));
    }

    private static long micros(long nanos) { return Math.min(HIGHEST_US, Math.max(0, nanos / 1000)); }

    private static double ms(double micros) { return round(micros / 1000.0); }

    private static double round(double v) { return Math.round(v * 1000) / 1000.0; }

    private static String encode(Histogram h) {
        ByteBuffer b = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
        int n = h.encodeIntoCompressedByteBuffer(b);
        return Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(b.array(), n));
    }
}
