package org.wanrep.emulator;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A fixed set of pgjdbc connections to one target, each served by its own thread that takes
 * submitted transactions in arrival order. A transaction waits in the queue until a connection is
 * free: the wait is part of its response time, and the submitter never blocks.
 */
final class ConnectionPool implements AutoCloseable {
    /** Runs submissions on a worker's connection. */
    interface Worker {
        /** Runs {@code s} on {@code c}; false when {@code c} is unusable afterwards. */
        boolean serve(Submission s, Connection c);

        /** {@code s} could not run: the worker has no connection and cannot open one. */
        void unserved(Submission s, SQLException cause);
    }

    private final SiteTarget target;
    private final Properties props;
    private final Worker worker;
    private final LinkedBlockingQueue<Submission> queue = new LinkedBlockingQueue<>();
    private final List<Connection> connections = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean stopping;

    ConnectionPool(SiteTarget target, Properties props, int size, Worker worker) throws SQLException {
        this.target = target;
        this.props = props;
        this.worker = worker;
        try {
            for (int i = 0; i < size; i++) connections.add(connect());
        } catch (SQLException e) {
            close();
            throw new SQLException("emulator for " + target.name() + ": cannot open connection " + (connections.size() + 1) + " of " + size
                    + " to " + target.jdbcUrl() + ": " + e.getMessage(), e.getSQLState(), e);
        }
        for (int i = 0; i < size; i++) {
            int k = i;
            // platform threads: on two cores they hand over to pgjdbc with less scheduling delay than virtual ones
            threads.add(Thread.ofPlatform().daemon().name("emulator-" + target.name() + "-" + i).start(() -> serve(k)));
        }
    }

    private Connection connect() throws SQLException {
        return DriverManager.getConnection(target.jdbcUrl(), props);
    }

    void submit(Submission s) { queue.add(s); }

    /** Submissions waiting for a connection. */
    int waiting() { return queue.size(); }

    private void serve(int k) {
        Connection c = connections.get(k);
        while (!stopping) {
            Submission s;
            try {
                s = queue.take();
            } catch (InterruptedException e) {
                return;
            }
            if (c == null) {
                try {
                    c = connect();
                    synchronized (connections) { connections.set(k, c); }
                } catch (SQLException e) {
                    worker.unserved(s, e);
                    continue;
                }
            }
            if (!worker.serve(s, c)) {
                closeQuietly(c);
                c = null;
            }
        }
    }

    /** Stops the workers and closes the connections; transactions still queued are never run. */
    @Override public void close() {
        stopping = true;
        for (Thread t : threads) t.interrupt();
        synchronized (connections) {
            for (Connection c : connections) closeQuietly(c);
        }
        for (Thread t : threads) {
            try {
                t.join(TimeUnit.SECONDS.toMillis(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static void closeQuietly(Connection c) {
        if (c == null) return;
        try {
            c.close();
        } catch (SQLException ignored) {
            // closing anyway
        }
    }
}
