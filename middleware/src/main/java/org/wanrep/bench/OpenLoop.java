package org.wanrep.bench;

import org.HdrHistogram.Histogram;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * An open-loop load: transactions start on a wall-clock schedule at a fixed total rate, round-robin
 * over the sites, whether or not earlier ones have finished; a response time runs from the
 * scheduled start, so waiting for a connection counts. Results per (site, transaction type).
 */
public final class OpenLoop {
    /** One transaction: its type and its SQL (one request). */
    public record Txn(String type, String sql) {}

    public record Key(String site, String type) {}

    public static final class Stats {
        public final Histogram latencyUs = new Histogram(3_600_000_000L, 3);
        public final AtomicLong errors = new AtomicLong();
        public volatile String lastError;
    }

    private final List<String> sites;
    private final List<BlockingQueue<Connection>> pools;
    private final Map<Key, Stats> stats = new ConcurrentHashMap<>();

    public OpenLoop(List<String> sites, List<BlockingQueue<Connection>> pools) {
        this.sites = sites;
        this.pools = pools;
    }

    public Map<Key, Stats> stats() { return stats; }

    /**
     * Runs {@code total} transactions at {@code rate} per second; the first {@code warmup} are not
     * measured. {@code next} makes each transaction from a seeded random source.
     */
    public void run(double rate, int total, int warmup, Function<Random, Txn> next, long seed, PrintStream progress) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(total);
        long start = System.nanoTime(), interval = (long) (1e9 / rate);
        Random r = new Random(seed);
        long lastReport = start;
        for (int k = 0; k < total; k++) {
            long due = start + k * interval;
            long wait = due - System.nanoTime();
            if (wait > 0) LockSupport.parkNanos(wait);
            int site = k % sites.size();
            Txn t = next.apply(r);
            boolean measured = k >= warmup;
            Stats s = stats.computeIfAbsent(new Key(sites.get(site), t.type()), x -> new Stats());
            Thread.ofVirtual().start(() -> {
                Connection c = null;
                try {
                    c = pools.get(site).take();
                    try (java.sql.Statement st = c.createStatement()) {
                        st.execute(t.sql());
                    }
                    if (measured) synchronized (s) { s.latencyUs.recordValue(Math.max(0, (System.nanoTime() - due) / 1000)); }
                } catch (SQLException | InterruptedException e) {
                    s.errors.incrementAndGet();
                    s.lastError = e.getMessage();
                } finally {
                    if (c != null) pools.get(site).add(c);
                    done.countDown();
                }
            });
            if (progress != null && System.nanoTime() - lastReport > 5_000_000_000L) {
                lastReport = System.nanoTime();
                progress.printf("  %4.0f s: %d/%d transactions started, %d finished%n", (lastReport - start) / 1e9, k + 1, total, total - done.getCount());
            }
        }
        done.await();
    }

    public static List<String> statsSummary(Map<Key, Stats> stats) {
        List<String> lines = new ArrayList<>();
        lines.add(String.format("%-14s %-8s %7s %7s %9s %9s %9s", "site", "type", "txns", "errors", "p50 ms", "p90 ms", "p99 ms"));
        stats.entrySet().stream().sorted(java.util.Comparator.comparing((Map.Entry<Key, Stats> e) -> e.getKey().site()).thenComparing(e -> e.getKey().type()))
                .forEach(e -> {
                    Histogram h = e.getValue().latencyUs;
                    lines.add(String.format("%-14s %-8s %7d %7d %9.1f %9.1f %9.1f", e.getKey().site(), e.getKey().type(), h.getTotalCount(),
                            e.getValue().errors.get(), h.getValueAtPercentile(50) / 1000.0, h.getValueAtPercentile(90) / 1000.0, h.getValueAtPercentile(99) / 1000.0));
                });
        return lines;
    }
}
