package org.wanrep.bench;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * One benchmark client sending pgbench's TPC-B-like transaction as one request through a proxy, until told to
 * stop: closed loop, or paced to one transaction per interval (a late one starts at once). A failed connection
 * or request counts as an error and the client connects again after a pause; its outcome is never counted.
 */
final class TpcbClient {
    private TpcbClient() {}

    static final String TPCB = "UPDATE pgbench_accounts SET abalance = abalance + %d WHERE aid = %d; "
            + "SELECT abalance FROM pgbench_accounts WHERE aid = %d; UPDATE pgbench_tellers SET tbalance = tbalance + %d WHERE tid = %d; "
            + "UPDATE pgbench_branches SET bbalance = bbalance + %d WHERE bid = %d; "
            + "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (%d, %d, %d, %d, CURRENT_TIMESTAMP)";

    interface Connector {
        Connection connect() throws SQLException;
    }

    /**
     * {@code intervalNanos} 0: closed loop (read before each transaction, so it may change while running);
     * {@code acknowledged} gets each acknowledged transaction's response time in microseconds.
     */
    static void run(Connector connector, int scale, Random rnd, AtomicBoolean stop, AtomicLong intervalNanos, long retryMs,
                    AtomicLong errors, LongConsumer acknowledged) {
        int accounts = 100_000 * scale;
        long next = System.nanoTime();
        while (!stop.get()) {
            try (Connection x = connector.connect(); Statement st = x.createStatement()) {
                while (!stop.get()) {
                    long interval = intervalNanos.get();
                    if (interval > 0) {
                        next = Math.max(next + interval, System.nanoTime() - interval);
                        long wait = next - System.nanoTime();
                        if (wait > 0) TimeUnit.NANOSECONDS.sleep(wait);
                    }
                    int aid = 1 + rnd.nextInt(accounts), tid = 1 + rnd.nextInt(10 * scale), bid = 1 + rnd.nextInt(scale), delta = rnd.nextInt(10001) - 5000;
                    long t = System.nanoTime();
                    st.execute(String.format(TPCB, delta, aid, aid, delta, tid, delta, bid, tid, bid, aid, delta));
                    acknowledged.accept((System.nanoTime() - t) / 1000);
                }
            } catch (SQLException e) {
                errors.incrementAndGet();
                try {
                    Thread.sleep(retryMs);
                } catch (InterruptedException x) {
                    return;
                }
            } catch (InterruptedException e) {
                return;
            }
        }
    }
}
