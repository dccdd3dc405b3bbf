package org.wanrep.emulator;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * What happened to every transaction of one emulator, by its index in submission order: when it
 * was due, when the emulator handed it to the pool, when it started (got a connection and went to
 * the server), when it ended, its type,
 * outcome and retries. Each slot is written by the one thread that handles the transaction; the
 * statistics read it after the run. Keeping every transaction (about 40 bytes each) makes the
 * warm-up/cool-down cut exact and lets nothing be dropped on the way.
 */
final class TxnLog {
    static final byte PENDING = 0, COMMITTED = 1, ABORTED = 2;

    final String site;
    final List<String> types;
    final int n, warmup, cooldown;
    final long[] due, dispatched, start, end;
    final byte[] status;
    final short[] type;
    final int[] retries;
    final AtomicReferenceArray<String> lastError;
    /** Measured window (System.nanoTime): throughput counts commits that end inside it. */
    volatile long windowStart, windowEnd;

    final AtomicLong submitted = new AtomicLong(), committed = new AtomicLong(), aborted = new AtomicLong(),
            retried = new AtomicLong(), late = new AtomicLong();
    private final CountDownLatch finished;
    private final long lateNanos;
    private volatile boolean closed;

    TxnLog(String site, List<String> types, int n, int warmup, int cooldown, long lateNanos) {
        this.site = site;
        this.types = List.copyOf(types);
        this.n = n;
        this.warmup = warmup;
        this.cooldown = cooldown;
        this.lateNanos = lateNanos;
        due = new long[n];
        dispatched = new long[n];
        start = new long[n];
        end = new long[n];
        status = new byte[n];
        type = new short[n];
        retries = new int[n];
        lastError = new AtomicReferenceArray<>(types.size());
        finished = new CountDownLatch(n);
    }

    long lateNanos() { return lateNanos; }

    /** Transactions outside the first and the last discarded share are measured. */
    boolean measured(int k) { return k >= warmup && k < n - cooldown; }

    int typeIndex(String t) {
        int i = types.indexOf(t);
        if (i < 0) throw new IllegalStateException("workload produced transaction type '" + t + "' not among its types " + types);
        return i;
    }

    void submitted(int k, long dueNanos, long nowNanos, int typeIndex) {
        due[k] = dueNanos;
        dispatched[k] = nowNanos;
        type[k] = (short) typeIndex;
        submitted.incrementAndGet();
    }

    void started(int k, long nanos) {
        start[k] = nanos;
        if (nanos - due[k] > lateNanos) late.incrementAndGet();
    }

    void finished(int k, long nanos, Attempts.Outcome o) {
        if (closed) return;   // the run gave up waiting: this one stays unfinished
        end[k] = nanos;
        retries[k] = o.retries();
        retried.addAndGet(o.retries());
        if (o.committed()) {
            status[k] = COMMITTED;
            committed.incrementAndGet();
        } else {
            status[k] = ABORTED;
            aborted.incrementAndGet();
            lastError.set(type[k], o.error());
        }
        finished.countDown();
    }

    long unfinished() { return finished.getCount(); }

    boolean awaitFinished(long timeoutNanos) throws InterruptedException {
        return finished.await(timeoutNanos, TimeUnit.NANOSECONDS);
    }

    /** No more outcomes are recorded after this: the run is over. */
    void close() { closed = true; }
}
