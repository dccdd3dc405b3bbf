package org.wanrep.frontend;

import org.wanrep.wire.WireStream;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What one site's clients may cost it: the largest message, the bytes all sessions may buffer
 * together, the time to authenticate, the idle time of a session, the sessions of one user, and the
 * connections still in their startup. Each bound answers as PostgreSQL does where it has one.
 */
public final class ClientLimits {
    /** A message before authentication completes (startup-phase answers, passwords, SCRAM): as small as PostgreSQL's. */
    public static final int MAX_MESSAGE_BEFORE_AUTH = 10_000;

    private final int maxMessage;
    private final Budget budget;
    private final int authTimeoutMs;
    private final int idleTimeoutMs;
    private final int maxPerUser;
    private final int maxStarting;
    private final ConcurrentHashMap<String, AtomicInteger> perUser = new ConcurrentHashMap<>();
    private final AtomicInteger starting = new AtomicInteger();
    private final ScheduledExecutorService timer = newTimer();

    private static ScheduledExecutorService newTimer() {
        java.util.concurrent.ScheduledThreadPoolExecutor t = new java.util.concurrent.ScheduledThreadPoolExecutor(1, r -> {
            Thread x = new Thread(r, "wanrep-client-timer");
            x.setDaemon(true);
            return x;
        });
        t.setRemoveOnCancelPolicy(true);   // a cancelled deadline must not keep its session's buffers for a minute
        return t;
    }

    /**
     * {@code budgetBytes}: what buffered client messages may hold at once; {@code maxPerUser} 0: no limit per user;
     * {@code maxStarting}: connections that have not finished their startup yet.
     */
    public ClientLimits(int maxMessage, long budgetBytes, int authTimeoutMs, int idleTimeoutMs, int maxPerUser, int maxStarting) {
        if (maxMessage < MAX_MESSAGE_BEFORE_AUTH) throw new IllegalArgumentException("the largest client message must be at least " + MAX_MESSAGE_BEFORE_AUTH + " bytes");
        this.maxMessage = maxMessage;
        this.budget = new Budget(budgetBytes);
        this.authTimeoutMs = authTimeoutMs;
        this.idleTimeoutMs = idleTimeoutMs;
        this.maxPerUser = maxPerUser;
        this.maxStarting = maxStarting;
    }

    /** Limits that bound nothing but the message size (tests that build a context by hand). */
    public static ClientLimits defaults() { return new ClientLimits(64 << 20, Long.MAX_VALUE / 2, 60_000, 0, 0, Integer.MAX_VALUE); }

    public int maxMessage() { return maxMessage; }
    public Budget budget() { return budget; }
    public int authTimeoutMs() { return authTimeoutMs; }
    public int idleTimeoutMs() { return idleTimeoutMs; }
    public int maxPerUser() { return maxPerUser; }
    ScheduledExecutorService timer() { return timer; }

    /** A place among the connections in their startup; false if all are taken (refused at once). */
    boolean tryStart() {
        if (starting.incrementAndGet() <= maxStarting) return true;
        starting.decrementAndGet();
        return false;
    }

    void started() { starting.decrementAndGet(); }

    /** A place among {@code user}'s sessions; false past {@code proxy.max_clients_per_user}. */
    boolean tryEnterUser(String user) {
        if (maxPerUser <= 0) return true;
        AtomicInteger n = perUser.computeIfAbsent(user, u -> new AtomicInteger());
        if (n.incrementAndGet() <= maxPerUser) return true;
        n.decrementAndGet();
        return false;
    }

    void leaveUser(String user) {
        if (maxPerUser <= 0) return;
        AtomicInteger n = perUser.get(user);
        if (n != null) n.decrementAndGet();   // entries stay: one per user name that ever connected
    }

    public void close() { timer.shutdownNow(); }

    /** The site's bytes of buffered client messages. */
    public static final class Budget {
        private final long capacity;
        private final AtomicLong used = new AtomicLong();

        Budget(long capacity) { this.capacity = capacity; }

        public long capacity() { return capacity; }
        public long used() { return used.get(); }

        boolean tryTake(long n) {
            while (true) {
                long u = used.get();
                if (u + n > capacity) return false;
                if (used.compareAndSet(u, u + n)) return true;
            }
        }

        /** Taken whatever the capacity (memory the session holds already, e.g. a logged statement of ours). */
        void force(long n) { used.addAndGet(n); }

        void give(long n) { used.addAndGet(-n); }
    }

    /** One session's share: what it took, to give back when it lets go of its messages. */
    static final class SessionShare implements WireStream.Budget {
        private final Budget site;
        private long held;

        SessionShare(Budget site) { this.site = site; }

        @Override public boolean tryTake(int bytes) {
            if (!site.tryTake(bytes)) return false;
            held += bytes;
            return true;
        }

        @Override public void give(long bytes) {
            held -= bytes;
            site.give(bytes);
        }

        /** Keeps exactly {@code retained} bytes (what the session still holds on to), giving back or forcing the difference. */
        void settle(long retained) {
            if (retained < held) give(held - retained);
            else if (retained > held) {
                site.force(retained - held);
                held = retained;
            }
        }

        long held() { return held; }
    }
}
