package org.wanrep.frontend;

import java.util.concurrent.Semaphore;

/**
 * How many client sessions this proxy serves at once. Each holds a connection to the replica; past
 * the limit a client is refused as PostgreSQL refuses one (FATAL 53300), so that the connections
 * replication needs (the pool for other sites' transactions, write-set capture and appliers) are
 * always left to it: clients must not starve the replica of the others' updates.
 */
public final class SessionLimit {
    private final int max;
    private final Semaphore free;

    public SessionLimit(int max) {
        if (max < 1) throw new IllegalArgumentException("client session limit must be at least 1, not " + max);
        this.max = max;
        this.free = new Semaphore(max);
    }

    public int max() { return max; }

    /** Takes a place for a new session; false if all are taken. */
    boolean tryEnter() { return free.tryAcquire(); }

    /** Gives back the place of a session that ends. */
    void leave() { free.release(); }

    /**
     * The default limit: the replica's connections, less those reserved for superusers, those
     * replication holds, and a margin for the proxy's catalog reads and administrators.
     */
    public static int derived(int maxConnections, int superuserReserved, int replicationConnections, int margin) {
        return maxConnections - superuserReserved - replicationConnections - margin;
    }
}
