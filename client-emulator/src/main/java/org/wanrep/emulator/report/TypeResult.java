package org.wanrep.emulator.report;

/**
 * One transaction type at one site (or {@code all} types), over the measured transactions.
 * Response times run from each transaction's due time, so waiting for a connection counts; the
 * schedule lag is how late it started (got a connection and went to the server). Throughput counts
 * commits that ended inside the measured window. {@code histogram} is the response-time
 * HdrHistogram in microseconds, compressed and base64-encoded, for merging runs later.
 */
public record TypeResult(String type, long measured, long committed, long aborts, long retries, double throughputTps,
                         double meanMs, double p50Ms, double p90Ms, double p99Ms, double maxMs,
                         long lateStarts, double lagP50Ms, double lagP99Ms, double lagMaxMs,
                         String lastError, String histogram) {}
