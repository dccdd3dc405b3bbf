package org.wanrep.backend;

import org.apache.commons.pool2.BaseKeyedPooledObjectFactory;
import org.apache.commons.pool2.PooledObject;
import org.apache.commons.pool2.impl.DefaultPooledObject;
import org.apache.commons.pool2.impl.GenericKeyedObjectPool;
import org.apache.commons.pool2.impl.GenericKeyedObjectPoolConfig;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;

/**
 * Wire-protocol connections to this site's replica for transactions that other sites originated,
 * pooled per database with Commons Pool (the pool under DBCP2: DBCP2 itself pools JDBC connections,
 * and these are raw protocol connections). A borrower waits when all are in use.
 */
public final class BackendPool implements AutoCloseable {
    private final GenericKeyedObjectPool<String, BackendConnection> pool;
    private final Duration maxWait;
    private final int size;
    private final BackendTarget target;
    /**
     * Where a role's connections log in (proxy.session_role client). By default without a password: a
     * request that names a role never runs as another one, which could succeed where its origin failed.
     */
    private volatile java.util.function.Function<String, BackendTarget> roles;
    /**
     * Borrowers wait here, not in the pool: Commons Pool answers a return while borrowers wait inside it
     * by destroying an idle connection and opening a new one (returnObject -> reuseCapacity -> create ->
     * clearOldest), so under load every transaction at a site paid a PostgreSQL connection start
     * (540 in one 5-second run). With a permit per connection a borrower always finds one idle or room.
     */
    private final java.util.concurrent.Semaphore permits;
    /** Connections lent out (a permit each, given back once). */
    private final java.util.Set<BackendConnection> lent = java.util.concurrent.ConcurrentHashMap.newKeySet();

    public BackendPool(BackendTarget target, int size, Duration maxWait) {
        this.maxWait = maxWait;
        this.size = size;
        this.target = target;
        this.roles = role -> target.as(role, null);
        this.permits = new java.util.concurrent.Semaphore(size, true);
        GenericKeyedObjectPoolConfig<BackendConnection> cfg = new GenericKeyedObjectPoolConfig<>();
        cfg.setMaxTotal(size);
        cfg.setMaxTotalPerKey(size);
        cfg.setMaxIdlePerKey(size);
        cfg.setBlockWhenExhausted(true);
        cfg.setMaxWait(maxWait);
        cfg.setTestOnReturn(false);
        cfg.setJmxEnabled(false);
        this.pool = new GenericKeyedObjectPool<>(new BaseKeyedPooledObjectFactory<>() {
            @Override public BackendConnection create(String key) throws IOException {
                int cut = key.indexOf('\0');
                if (cut < 0) return BackendConnection.open(target, key, Map.of("application_name", "wanrep-replica"));
                return BackendConnection.open(roles.apply(key.substring(cut + 1)), key.substring(0, cut), Map.of("application_name", "wanrep-replica"));
            }

            @Override public PooledObject<BackendConnection> wrap(BackendConnection c) { return new DefaultPooledObject<>(c); }

            @Override public void destroyObject(String db, PooledObject<BackendConnection> p) { p.getObject().close(); }

            @Override public boolean validateObject(String db, PooledObject<BackendConnection> p) {
                return !p.getObject().isBroken() && p.getObject().status() == 'I';
            }
        }, cfg);
    }

    /** Lets {@link #borrow(String, String)} open connections that log in as a given role. */
    public void roles(java.util.function.Function<String, BackendTarget> roleTargets) { this.roles = roleTargets; }

    public BackendConnection borrow(String database) throws IOException { return borrow(database, null); }

    /**
     * A connection to {@code database} logged in as {@code role} (null: the target's user), so that
     * what another site's client sent runs here with that client's privileges. The pool's total stays
     * fixed: a role without an idle connection takes the place of the oldest idle one of another.
     */
    public BackendConnection borrow(String database, String role) throws IOException {
        if (role != null && role.equals(target.user())) role = null;
        try {
            if (!permits.tryAcquire(maxWait.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS))
                throw new BackendException("no backend connection free within " + maxWait.toMillis() + " ms (pool.size)", null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException("interrupted while waiting for a backend connection", e);
        }
        return lend(key(database, role));
    }

    /** A connection for {@code key}, under a permit the caller holds (given back if none can be had). */
    private BackendConnection lend(String key) throws IOException {
        boolean lentOut = false;
        try {
            BackendConnection c = pool.borrowObject(key);
            lent.add(c);
            lentOut = true;
            return c;
        } catch (IOException e) {
            throw e;
        } catch (java.util.NoSuchElementException e) {
            throw new BackendException("no backend connection free within " + maxWait.toMillis() + " ms (pool.size)", e);
        } catch (Exception e) {
            throw new BackendException("cannot open a backend connection: " + e.getMessage(), e);
        } finally {
            if (!lentOut) permits.release();
        }
    }

    /**
     * Ends a loan: {@code c} leaves the lent set before it goes back to the idle connections (where another borrower
     * may take it at once, and adds it to the set again), and the loan's permit is freed after that. The other way round,
     * a borrower that took the connection in between had its entry removed by this loan's end, and then never gave its
     * permit back: the pool shrank by one for good (seen once commits followed the total order and connections came back
     * on the committing thread).
     */
    private void endLoan(BackendConnection c, Runnable giveToPool) {
        boolean wasLent = lent.remove(c);
        try {
            giveToPool.run();
        } finally {
            if (wasLent) permits.release();
        }
    }

    /**
     * Opens every connection of the pool now, to {@code database}, and keeps them idle: the replica's
     * connection slots are held for replication from the start, whatever clients do meanwhile. A
     * transaction for another database takes the place of the oldest idle one (the pool's total is fixed).
     */
    public void fill(String database) throws IOException {
        java.util.List<BackendConnection> opened = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < size; i++) opened.add(borrow(database));
        } finally {
            for (BackendConnection c : opened) release(c);
        }
    }

    /** Returns a connection; a broken one, or one left inside a transaction, is closed instead. */
    public void release(BackendConnection c) {
        endLoan(c, () -> {
            try {
                if (c.isBroken() || c.status() != 'I') pool.invalidateObject(key(c), c);
                else pool.returnObject(key(c), c);
            } catch (Exception e) {
                c.close();
            }
        });
    }

    /** Closes a borrowed connection instead of returning it (its session cannot be trusted). */
    public void discard(BackendConnection c) {
        endLoan(c, () -> {
            try {
                pool.invalidateObject(key(c), c);
            } catch (Exception e) {
                c.close();
            }
        });
    }

    private static String key(String database, String role) { return role == null ? database : database + '\0' + role; }

    private String key(BackendConnection c) { return key(c.database(), c.user().equals(target.user()) ? null : c.user()); }

    /**
     * Closes every idle connection and refills the pool to {@code database} (the replica's databases were
     * recreated by a state transfer: the old sessions are gone).
     */
    public void renew(String database) throws IOException {
        pool.clear();
        // only the connections free now: one still lent (work that finished before the transfer but has not given
        // its connection back yet) is closed when it comes back broken, and its place opens again at the next borrow
        java.util.List<BackendConnection> opened = new java.util.ArrayList<>();
        try {
            while (opened.size() < size && permits.tryAcquire()) opened.add(lend(key(database, null)));
        } finally {
            for (BackendConnection c : opened) release(c);
        }
    }

    @Override public void close() { pool.close(); }
}
