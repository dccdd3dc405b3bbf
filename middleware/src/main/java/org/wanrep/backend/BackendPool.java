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

    public BackendPool(BackendTarget target, int size, Duration maxWait) {
        this.maxWait = maxWait;
        this.size = size;
        GenericKeyedObjectPoolConfig<BackendConnection> cfg = new GenericKeyedObjectPoolConfig<>();
        cfg.setMaxTotal(size);
        cfg.setMaxTotalPerKey(size);
        cfg.setMaxIdlePerKey(size);
        cfg.setBlockWhenExhausted(true);
        cfg.setMaxWait(maxWait);
        cfg.setTestOnReturn(false);
        cfg.setJmxEnabled(false);
        this.pool = new GenericKeyedObjectPool<>(new BaseKeyedPooledObjectFactory<>() {
            @Override public BackendConnection create(String database) throws IOException {
                return BackendConnection.open(target, database, Map.of("application_name", "wanrep-replica"));
            }

            @Override public PooledObject<BackendConnection> wrap(BackendConnection c) { return new DefaultPooledObject<>(c); }

            @Override public void destroyObject(String db, PooledObject<BackendConnection> p) { p.getObject().close(); }

            @Override public boolean validateObject(String db, PooledObject<BackendConnection> p) {
                return !p.getObject().isBroken() && p.getObject().status() == 'I';
            }
        }, cfg);
    }

    public BackendConnection borrow(String database) throws IOException {
        try {
            return pool.borrowObject(database);
        } catch (IOException e) {
            throw e;
        } catch (java.util.NoSuchElementException e) {
            throw new BackendException("no backend connection free within " + maxWait.toMillis() + " ms (pool.size)", e);
        } catch (Exception e) {
            throw new BackendException("cannot open a backend connection: " + e.getMessage(), e);
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
        try {
            if (c.isBroken() || c.status() != 'I') pool.invalidateObject(c.database(), c);
            else pool.returnObject(c.database(), c);
        } catch (Exception e) {
            c.close();
        }
    }

    /** Closes a borrowed connection instead of returning it (its session cannot be trusted). */
    public void discard(BackendConnection c) {
        try {
            pool.invalidateObject(c.database(), c);
        } catch (Exception e) {
            c.close();
        }
    }

    /**
     * Closes every idle connection and refills the pool to {@code database} (the replica's databases were
     * recreated by a state transfer: the old sessions are gone).
     */
    public void renew(String database) throws IOException {
        pool.clear();
        fill(database);
    }

    @Override public void close() { pool.close(); }
}
