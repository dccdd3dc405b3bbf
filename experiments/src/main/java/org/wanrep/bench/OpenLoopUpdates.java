package org.wanrep.bench;

import org.HdrHistogram.Histogram;
import org.wanrep.site.Site;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The WAN benchmarks' load: single-request transactions submitted open loop at a fixed total rate,
 * round-robin over the sites, on a few connections per site; a response time runs from the
 * scheduled start (waiting for a connection counts). Any failed transaction fails the run.
 */
final class OpenLoopUpdates {
    private OpenLoopUpdates() {}

    /** The SQL of transaction {@code k}, submitted at site index {@code site}. */
    interface Sql { String of(int k, int site, Random r); }

    /** Per site, the histogram (microseconds) of the transactions after the first {@code warmup}. */
    static Histogram[] run(List<Site> sites, double rate, int total, int warmup, Sql sql, String label, PrintStream out) throws Exception {
        int n = sites.size();
        List<BlockingQueue<Connection>> conns = new ArrayList<>();
        for (Site s : sites) {
            BlockingQueue<Connection> q = new ArrayBlockingQueue<>(8);
            for (int k = 0; k < 8; k++) q.add(connect(s));
            conns.add(q);
        }
        Histogram[] hs = new Histogram[n];
        for (int i = 0; i < n; i++) hs[i] = new Histogram(3);
        CountDownLatch done = new CountDownLatch(total);
        AtomicInteger errors = new AtomicInteger();
        AtomicReference<String> lastError = new AtomicReference<>();
        long start = System.nanoTime(), interval = (long) (1e9 / rate);
        Random r = new Random(42);
        try {
            for (int k = 0; k < total; k++) {
                long due = start + k * interval;
                long wait = due - System.nanoTime();
                if (wait > 0) LockSupport.parkNanos(wait);
                int site = k % n;
                String text = sql.of(k, site, r);
                boolean measured = k >= warmup;
                Thread.ofVirtual().start(() -> {
                    Connection c = null;
                    try {
                        c = conns.get(site).take();
                        try (Statement st = c.createStatement()) {
                            st.execute(text);
                        }
                        long us = (System.nanoTime() - due) / 1000;
                        if (measured) synchronized (hs[site]) { hs[site].recordValue(us); }
                    } catch (Exception e) {
                        errors.incrementAndGet();
                        lastError.set(e.getMessage());
                    } finally {
                        if (c != null) conns.get(site).add(c);
                        done.countDown();
                    }
                });
                if ((k + 1) % Math.max(1, (int) rate * 5) == 0) out.printf("  %s: %d/%d submitted%n", label, k + 1, total);
            }
            done.await();
        } finally {
            for (BlockingQueue<Connection> q : conns) for (Connection c : q) c.close();
        }
        if (errors.get() > 0) throw new IllegalStateException(label + ": " + errors.get() + " transactions failed, e.g. " + lastError.get());
        return hs;
    }

    /** A configuration for one site per matrix site, each in front of its own local PostgreSQL. */
    static java.util.Map<String, String> clusterConfig(String name, List<String> sites, String matrix, List<org.wanrep.pg.LocalPostgres> pgs)
            throws java.io.IOException {
        java.util.Map<String, String> conf = new java.util.LinkedHashMap<>();
        conf.put("cluster.name", name + "-" + System.nanoTime());
        conf.put("sites", String.join(",", sites));
        conf.put("latency_matrix", matrix);
        List<Integer> gcsPorts = org.wanrep.gcs.jgroups.GcsSettings.freePorts(sites.size());
        for (int i = 0; i < sites.size(); i++) {
            conf.put("site." + sites.get(i) + ".postgres.port", Integer.toString(pgs.get(i).port()));
            conf.put("site." + sites.get(i) + ".postgres.socket_dir", pgs.get(i).dataDir().toString());
            conf.put("site." + sites.get(i) + ".gcs.port", Integer.toString(gcsPorts.get(i)));
            conf.put("site." + sites.get(i) + ".proxy.port", Integer.toString(org.wanrep.pg.LocalPostgres.freePort()));
        }
        return conf;
    }

    /** Waits until every site finished what it was delivered and all delivered the same sequence. */
    static void awaitQuiet(List<Site> sites) throws InterruptedException {
        long end = System.nanoTime() + 120_000_000_000L;
        while (System.nanoTime() < end && !(sites.stream().allMatch(s -> s.engine().pending() == 0)
                && sites.stream().map(s -> s.engine().lastGsn()).distinct().count() == 1)) Thread.sleep(20);
    }

    static Connection connect(Site s) throws Exception {
        Properties p = new Properties();
        p.setProperty("user", "postgres");
        return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + s.proxyPort() + "/postgres", p);
    }
}
