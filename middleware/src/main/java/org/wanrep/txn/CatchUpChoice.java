package org.wanrep.txn;

/**
 * Replay or copy: a site back in the primary component behind the others either replays what it missed
 * from their logs or takes a state transfer (a copy of a serving site's replica), whichever should end
 * first. Replaying costs about as much per transaction as running it did (three replicas on two cores
 * replayed 250-330 per second), a copy about the replica's size over the copy rate (pgbench scale 10,
 * ~160 MB: 4.6 s); a 60 s partition under ~400 updates per second left 19,000 to replay (57 s), where a
 * copy took seconds. Both rates start from settings and then follow what this site measured last.
 * Pure (the engine asks it), so the choice is tested without a cluster.
 */
public final class CatchUpChoice {
    /** What a copy costs besides its bytes (connections, pg_restore's start, the pool renewed), in seconds. */
    static final double TRANSFER_OVERHEAD_SECONDS = 3;

    private double replayPerSecond, transferBytesPerSecond;

    /** {@code replayPerSecond} 0 or less: never prefer a copy (replay whatever the logs hold). */
    public CatchUpChoice(double replayPerSecond, double transferMegabytesPerSecond) {
        this.replayPerSecond = replayPerSecond;
        this.transferBytesPerSecond = transferMegabytesPerSecond * 1024 * 1024;
    }

    /** Never prefers a copy (engines built without a site). */
    public static CatchUpChoice replayAlways() { return new CatchUpChoice(0, 1); }

    /** Seconds a replay of {@code gap} transactions should take. */
    public synchronized double replaySeconds(long gap) { return replayPerSecond <= 0 ? 0 : gap / replayPerSecond; }

    /** Seconds a copy of {@code bytes} should take (negative bytes: unknown, infinite). */
    public synchronized double transferSeconds(long bytes) {
        return bytes < 0 || transferBytesPerSecond <= 0 ? Double.POSITIVE_INFINITY : TRANSFER_OVERHEAD_SECONDS + bytes / transferBytesPerSecond;
    }

    /** Whether a copy of a replica of {@code bytes} should end before a replay of {@code gap} transactions. */
    public synchronized boolean copyFirst(long gap, long bytes) {
        return replayPerSecond > 0 && transferSeconds(bytes) < replaySeconds(gap);
    }

    /** A replay of {@code txns} took {@code millis}: the next estimate uses its rate (short ones say little). */
    public synchronized void replayed(long txns, long millis) {
        if (replayPerSecond > 0 && txns >= 1000 && millis > 0) replayPerSecond = txns * 1000.0 / millis;
    }

    /** A copy of {@code bytes} took {@code millis} in all. */
    public synchronized void transferred(long bytes, long millis) {
        double seconds = millis / 1000.0 - TRANSFER_OVERHEAD_SECONDS;
        if (bytes > 0 && seconds > 0.5) transferBytesPerSecond = bytes / seconds;
    }
}
