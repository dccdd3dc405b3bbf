package org.wanrep.writeset.capture;

import org.slf4j.Logger;
import org.wanrep.writeset.WriteSet;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Who waits for the write set of which id (a tag, a gid), the write sets that came before anyone
 * waited (the oldest dropped past a limit), and a bounded memory of what was handed over already:
 * the slot resends after a reconnect, and a waiter must hear of its write set once.
 * <p>
 * Once failed ({@link #fail}), every waiter fails, and so does every later one: the capture
 * confirms nothing past a failed hand-over, so it hands nothing after it over either.
 */
final class WriteSetWaiters {
    private final Logger log;
    private final String name;
    private final int unclaimedLimit;
    final AtomicLong handedOver = new AtomicLong(), duplicates = new AtomicLong();

    // guarded by this
    private final Map<String, CompletableFuture<WriteSet>> waiters = new HashMap<>();
    private final LinkedHashMap<String, CompletableFuture<WriteSet>> unclaimed = new LinkedHashMap<>();
    private final LinkedHashMap<String, Boolean> delivered;

    private volatile SQLException failure;

    /** @param name how log lines call the capture ("capture ws1") */
    WriteSetWaiters(Logger log, String name, int unclaimedLimit, int remembered) {
        this.log = log;
        this.name = name;
        this.unclaimedLimit = unclaimedLimit;
        this.delivered = new LinkedHashMap<>(1024, 0.75f, false) {
            @Override protected boolean removeEldestEntry(Map.Entry<String, Boolean> e) { return size() > remembered; }
        };
    }

    /** A future completed with the write set handed over as {@code id}, or failed with why it cannot be shipped. */
    synchronized CompletableFuture<WriteSet> expect(String id) {
        CompletableFuture<WriteSet> early = unclaimed.remove(id);
        if (early != null) return early;
        if (failure != null) return CompletableFuture.failedFuture(failure);
        CompletableFuture<WriteSet> f = waiters.computeIfAbsent(id, k -> new CompletableFuture<>());
        // a waiter that gives up (timeout, cancel) must not leak
        f.whenComplete((ws, e) -> { if (e != null) synchronized (this) { waiters.remove(id, f); } });
        return f;
    }

    /** Why hand-over stopped, or null while it works. */
    SQLException failure() { return failure; }

    /** Records the failure and fails every waiter with it (new ones fail at once, see {@link #expect}). */
    void fail(SQLException e) {
        List<CompletableFuture<WriteSet>> pending;
        synchronized (this) {
            if (failure != null) return;
            failure = e;
            pending = new ArrayList<>(waiters.values());
            waiters.clear();
        }
        pending.forEach(f -> f.completeExceptionally(e));
    }

    /**
     * Hands {@code ws} (or {@code refusal}) over to whoever waits for {@code id}, or keeps it for a later
     * {@link #expect}; the newest of an id wins. {@code occurrence} tells a resend (seen already: dropped)
     * from a later write set reusing the id.
     */
    void deliver(String id, String occurrence, WriteSet ws, SQLException refusal) {
        CompletableFuture<WriteSet> f;
        synchronized (this) {
            if (delivered.put(occurrence, Boolean.TRUE) != null) {
                duplicates.incrementAndGet();   // resent after a reconnect
                return;
            }
            f = waiters.remove(id);
            if (f == null) {
                f = new CompletableFuture<>();
                unclaimed.remove(id);   // an older, unclaimed write set of a reused id: the newest wins
                unclaimed.put(id, f);
                if (unclaimed.size() > unclaimedLimit) {
                    String eldest = unclaimed.keySet().iterator().next();
                    unclaimed.remove(eldest);
                    log.warn("{}: nobody claimed write set {}; dropped", name, eldest);
                }
            }
        }
        handedOver.incrementAndGet();
        if (refusal != null) f.completeExceptionally(refusal);
        else f.complete(ws);
    }

    /** Fails the waiters of now with {@code closed} (the capture is closed; it records no failure). */
    synchronized void close(SQLException closed) {
        List<CompletableFuture<WriteSet>> pending = new ArrayList<>(waiters.values());
        waiters.clear();
        pending.forEach(f -> f.completeExceptionally(closed));
    }
}
