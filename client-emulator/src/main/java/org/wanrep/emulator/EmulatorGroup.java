package org.wanrep.emulator;

import org.wanrep.emulator.report.RunResult;
import org.wanrep.emulator.report.SiteResult;

import java.io.PrintStream;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The emulators of one run, one per site, in this process: each gets an even share of the load
 * (rate or clients) and its own seed, all connect before any transaction is due, and the open-loop
 * schedules start at the same instant, interleaved so that together they submit evenly.
 */
public final class EmulatorGroup {
    public static final Duration DEFAULT_PROGRESS = Duration.ofSeconds(5);
    private static final Duration START_DELAY = Duration.ofMillis(200);

    private final List<SiteTarget> targets;
    private final EmulatorConfig total;
    private final PrintStream out;
    private final Duration progressEvery;

    /**
     * Looks at the run while it goes on (about once a second) and may stop it: returns why the run
     * should stop (a saturated system, say), or null to go on.
     */
    @FunctionalInterface
    public interface Watchdog {
        String check(Emulator.Progress total, double elapsedSeconds);

        Watchdog NONE = (p, s) -> null;
    }

    /** {@code total} carries the load of the whole run; transactions and connections are per emulator. */
    public EmulatorGroup(List<SiteTarget> targets, EmulatorConfig total, PrintStream out, Duration progressEvery) {
        if (targets.isEmpty()) throw new IllegalArgumentException("no sites to emulate clients for");
        this.targets = List.copyOf(targets);
        this.total = total;
        this.out = out;
        this.progressEvery = progressEvery;
    }

    public RunResult run() throws SQLException, InterruptedException { return run(Watchdog.NONE); }

    /**
     * Runs the emulators; when {@code watchdog} gives a reason, every emulator stops submitting and
     * the run ends without waiting for answers still out; the reason is in the settings as {@code stopped}.
     */
    public RunResult run(Watchdog watchdog) throws SQLException, InterruptedException {
        int n = targets.size();
        List<Emulator> es = new ArrayList<>();
        for (int i = 0; i < n; i++) es.add(new Emulator(targets.get(i), total.shareOf(i, n)));
        try {
            openAll(es);
            long start = System.nanoTime() + START_DELAY.toNanos();
            Instant startedAt = Instant.now().plus(START_DELAY);
            List<SiteResult> results = new ArrayList<>();
            for (int i = 0; i < n; i++) results.add(null);
            AtomicReference<Throwable> failed = new AtomicReference<>();
            List<Thread> runners = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int k = i;
                Thread t = Thread.ofPlatform().name("emulator-" + targets.get(i).name()).unstarted(() -> {
                    try {
                        results.set(k, es.get(k).run(start));
                    } catch (Throwable e) {
                        failed.compareAndSet(null, e);
                    }
                });
                t.setPriority(Thread.MAX_PRIORITY);   // the schedule's thread: wake up on time
                runners.add(t);
                t.start();
            }
            String stopped = watch(es, runners, start, watchdog);
            if (failed.get() != null) throw new IllegalStateException("emulator failed: " + failed.get(), failed.get());
            SiteResult all = null;
            if (n > 1) {
                List<TxnLog> logs = es.stream().map(Emulator::log).toList();
                Double rate = total.load() instanceof Load.Open o ? o.rateTps() : null;
                all = Statistics.of("all sites", n + " sites", total.load().describe(), rate, logs, List.of(), null);
            }
            Map<String, Object> settings = settings(n, startedAt);
            if (stopped != null) settings.put("stopped", stopped);
            return new RunResult(settings, results, all, new LinkedHashMap<>());
        } finally {
            for (Emulator e : es) e.close();
        }
    }

    private void openAll(List<Emulator> es) throws SQLException, InterruptedException {
        AtomicReference<SQLException> failed = new AtomicReference<>();
        List<Thread> ts = new ArrayList<>();
        for (Emulator e : es) ts.add(Thread.ofVirtual().start(() -> {
            try {
                e.open();
            } catch (SQLException ex) {
                failed.compareAndSet(null, ex);
            }
        }));
        for (Thread t : ts) t.join();
        if (failed.get() != null) throw failed.get();
    }

    /** Waits for the runners, printing a progress line every few seconds; returns why the watchdog stopped the run, or null. */
    private String watch(List<Emulator> es, List<Thread> runners, long start, Watchdog watchdog) throws InterruptedException {
        long next = start + progressEvery.toNanos();
        long nextCheck = start + WATCHDOG_EVERY_NANOS;
        String stopped = null;
        for (Thread t : runners) {
            while (t.isAlive()) {
                long wait = Math.max(1, (Math.min(next, nextCheck) - System.nanoTime()) / 1_000_000);
                t.join(wait);
                if (stopped == null && System.nanoTime() >= nextCheck) {
                    nextCheck += WATCHDOG_EVERY_NANOS;
                    Emulator.Progress p = es.stream().map(Emulator::progress).reduce(Emulator.Progress::plus).orElseThrow();
                    stopped = watchdog.check(p, (System.nanoTime() - start) / 1e9);
                    if (stopped != null) {
                        if (out != null) out.println("  stopping the run: " + stopped);
                        es.forEach(Emulator::stop);
                    }
                }
                if (out != null && System.nanoTime() >= next) {
                    Emulator.Progress p = es.stream().map(Emulator::progress).reduce(Emulator.Progress::plus).orElseThrow();
                    out.printf("  [%4.0f s] submitted %d/%d, answered %d (%d aborted, %d retries), %d in flight, %d waiting for a connection, %d late starts%n",
                            (System.nanoTime() - start) / 1e9, p.submitted(), p.total(), p.committed() + p.aborted(), p.aborted(), p.retries(),
                            p.inFlight(), p.waiting(), p.lateStarts());
                    next += progressEvery.toNanos();
                }
            }
        }
        return stopped;
    }

    private static final long WATCHDOG_EVERY_NANOS = 1_000_000_000L;

    private Map<String, Object> settings(int n, Instant startedAt) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("workload", total.workload().name());
        s.put("workload_detail", total.workload().toString());
        s.put("load", total.load().describe());
        if (total.load() instanceof Load.Open o) {
            s.put("rate_tps", o.rateTps());
            s.put("arrivals", o.arrivals().label());
        } else if (total.load() instanceof Load.Closed c) {
            s.put("clients", c.clients());
            s.put("think_time_ms", c.thinkTime() == null ? "workload" : c.thinkTime().toMillis());
        }
        s.put("emulators", n);
        s.put("transactions_per_emulator", total.transactions());
        s.put("warmup_fraction", total.warmupFraction());
        s.put("discarded_each_end", total.warmup());
        s.put("connections_per_emulator", total.connections());
        s.put("seed", total.seed());
        s.put("max_retries", total.maxRetries());
        s.put("late_start_ms", EmulatorConfig.LATE_START.toMillis());
        s.put("started_at", startedAt.toString());
        return s;
    }
}
