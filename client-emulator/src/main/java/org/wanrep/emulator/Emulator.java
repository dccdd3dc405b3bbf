package org.wanrep.emulator;

import org.wanrep.emulator.report.PhaseRow;
import org.wanrep.emulator.report.SiteResult;
import org.wanrep.emulator.workload.Transaction;
import org.wanrep.emulator.workload.Workload;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The client emulator of one site: it submits the workload's transactions to that site (its
 * proxy, or a PostgreSQL server) through a fixed pool of pgjdbc connections, and logs each one.
 * <p>
 * Open loop: a transaction is due at its place on a wall-clock schedule and is submitted then,
 * however many earlier ones are still running; its response time runs from the due time, so a
 * wait for a free connection or a late wake-up of the scheduler counts (no coordinated omission),
 * and a start more than {@link EmulatorConfig#LATE_START} after the due time is a late start.
 * Closed loop: each client thinks, submits and waits for the answer.
 * <p>
 * Each client draws its transactions and think times from one {@link Random} of its own, kept for
 * its whole life (an open-loop schedule is one client), so workloads can keep per-client sessions.
 * <p>
 * The first and last {@link EmulatorConfig#warmup()} transactions are run but not measured; the
 * proxy's phase breakdown is reset when the first measured one is due and read when the first
 * discarded one at the end is due.
 */
public final class Emulator implements AutoCloseable {
    private final SiteTarget target;
    private final EmulatorConfig cfg;
    private final Workload workload;
    private final TxnLog log;
    /** Probe calls run here, in order, so that the schedule never waits for them. */
    private final ExecutorService admin = Executors.newSingleThreadExecutor(Thread.ofVirtual().name("emulator-admin").factory());
    private final AtomicBoolean windowOpened = new AtomicBoolean(), windowClosed = new AtomicBoolean();
    /** Set by {@link #stop}: submit nothing more, stop waiting for answers. */
    private volatile boolean stopped;
    private CompletableFuture<Void> reset = CompletableFuture.completedFuture(null);
    private CompletableFuture<List<PhaseRow>> phases;
    private ConnectionPool pool;
    private PhaseProbe probe;
    private String probeError;

    public Emulator(SiteTarget target, EmulatorConfig cfg) {
        this.target = target;
        this.cfg = cfg;
        this.workload = cfg.workload().forSite(target.name());
        this.log = new TxnLog(target.name(), workload.types(), cfg.transactions(), cfg.warmup(), cfg.cooldown(), EmulatorConfig.LATE_START.toNanos());
    }

    public SiteTarget target() { return target; }
    public EmulatorConfig config() { return cfg; }

    /** Opens the connections (all of them, before any transaction is due) and the phase probe. */
    public void open() throws SQLException {
        try {
            probe = PhaseProbe.open(target, cfg.connectionProperties());
        } catch (SQLException e) {
            throw new SQLException("emulator for " + target.name() + ": cannot connect to " + target.jdbcUrl() + ": " + e.getMessage(), e.getSQLState(), e);
        }
        pool = new ConnectionPool(target, cfg.connectionProperties(), cfg.connections(), new ConnectionPool.Worker() {
            @Override public boolean serve(Submission s, Connection c) { return Emulator.this.serve(s, c); }
            @Override public void unserved(Submission s, SQLException cause) { Emulator.this.unserved(s, cause); }
        });
    }

    /**
     * Runs the whole load and returns its result. An open-loop schedule starts at {@code startNanos}
     * ({@link System#nanoTime}); then the run waits for every answer, at most the drain timeout.
     */
    public SiteResult run(long startNanos) throws InterruptedException {
        if (pool == null) throw new IllegalStateException("open() first");
        Random base = new Random(cfg.seed());
        switch (cfg.load()) {
            case Load.Open o -> runOpen(o, startNanos, base);
            case Load.Closed c -> runClosed(c, base);
        }
        long drainEnd = System.nanoTime() + cfg.drainTimeout().toNanos();
        while (!stopped && !log.awaitFinished(Math.min(STOP_POLL_NANOS, drainEnd - System.nanoTime())) && System.nanoTime() < drainEnd) {
            // waiting for the answers, unless stopped
        }
        log.close();
        closeWindow(System.nanoTime());   // when nothing is discarded at the end, the window closes with the last answer
        List<PhaseRow> rows = List.of();
        try {
            rows = phases.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            probeError = "phases not read: " + (e.getCause() == null ? e : e.getCause()).getMessage();
        }
        String note = probe.note() != null ? probe.note() : probeError;
        Double rate = cfg.load() instanceof Load.Open o ? o.rateTps() : null;
        return Statistics.of(target.name(), target.jdbcUrl(), cfg.load().describe(), rate, List.of(log), rows, note);
    }

    private static final long STOP_POLL_NANOS = 100_000_000L;

    /**
     * Stops the run early (a saturated system, say): no further transaction is submitted, and the
     * run returns without waiting for the answers still out; those count as unfinished.
     */
    public void stop() { stopped = true; }

    public boolean stopped() { return stopped; }

    private void runOpen(Load.Open o, long startNanos, Random base) {
        int n = cfg.transactions();
        long[] offsets = o.arrivals().schedule(n, o.rateTps(), new Random(base.nextLong()));
        // one client: the same source for every transaction of the run (Workload.next keys client state on it)
        Random r = new Random(base.nextLong());
        long origin = startNanos + o.offset().toNanos();
        for (int k = 0; k < n && !stopped; k++) {
            long due = origin + offsets[k];
            for (long wait; (wait = due - System.nanoTime()) > 0 && !stopped; ) LockSupport.parkNanos(Math.min(wait, STOP_POLL_NANOS));
            if (!stopped) submit(k, next(r), due, null);
        }
    }

    private void runClosed(Load.Closed c, Random base) throws InterruptedException {
        AtomicInteger counter = new AtomicInteger();
        List<Thread> clients = new ArrayList<>();
        for (int i = 0; i < c.clients(); i++) {
            // the client's source for its whole life, never one per transaction (Workload.next keys client state on it)
            Random r = new Random(base.nextLong());
            clients.add(Thread.ofVirtual().name("client-" + target.name() + "-" + i).start(() -> client(r, c.thinkTime(), counter)));
        }
        for (Thread t : clients) t.join();
    }

    /** One closed-loop client: think, submit, wait for the answer; until the emulator's transactions are used up. */
    private void client(Random r, Duration fixedThink, AtomicInteger counter) {
        try {
            while (true) {
                Duration think = fixedThink != null ? fixedThink : thinkTime(r);
                if (!think.isZero()) Thread.sleep(think);
                int k = counter.getAndIncrement();
                if (k >= cfg.transactions() || stopped) return;
                CompletableFuture<Void> answered = new CompletableFuture<>();
                submit(k, next(r), System.nanoTime(), () -> answered.complete(null));
                answered.get(cfg.drainTimeout().toNanos(), TimeUnit.NANOSECONDS);
            }
        } catch (InterruptedException | ExecutionException | TimeoutException e) {
            // gave up waiting: the transaction stays unfinished in the log
        }
    }

    private void submit(int k, Transaction t, long due, Runnable onDone) {
        if (k == cfg.warmup()) openWindow(due);
        if (k == cfg.transactions() - cfg.cooldown() && cfg.cooldown() > 0) closeWindow(due);
        log.submitted(k, due, System.nanoTime(), log.typeIndex(t.type()));
        pool.submit(new Submission(k, t, onDone));
    }

    // the workload is shared by the emulators of a run and its clients: calls are serialized here
    private Transaction next(Random r) {
        synchronized (workload) {
            return workload.next(r);
        }
    }

    private Duration thinkTime(Random r) {
        synchronized (workload) {
            return workload.thinkTime(r);
        }
    }

    private void openWindow(long at) {
        if (!windowOpened.compareAndSet(false, true)) return;
        log.windowStart = at;
        reset = CompletableFuture.runAsync(() -> {
            try {
                probe.reset();
            } catch (SQLException e) {
                throw new IllegalStateException("RESET wanrep.phases at " + target.name() + ": " + e.getMessage(), e);
            }
        }, admin);
    }

    private void closeWindow(long at) {
        if (!windowClosed.compareAndSet(false, true)) return;
        log.windowEnd = at;
        phases = reset.thenApplyAsync(x -> {
            try {
                return probe.read();
            } catch (SQLException e) {
                throw new IllegalStateException("SHOW wanrep.phases at " + target.name() + ": " + e.getMessage(), e);
            }
        }, admin);
    }

    private boolean serve(Submission s, Connection c) {
        log.started(s.index(), System.nanoTime());
        Attempts.Outcome o = Attempts.run(s.txn(), c, cfg.maxRetries());
        log.finished(s.index(), System.nanoTime(), o);
        if (s.onDone() != null) s.onDone().run();
        return !o.connectionLost();
    }

    private void unserved(Submission s, SQLException cause) {
        long now = System.nanoTime();
        log.started(s.index(), now);
        log.finished(s.index(), now, new Attempts.Outcome(false, 0, "no connection: " + Attempts.describe(cause), true));
        if (s.onDone() != null) s.onDone().run();
    }

    /** Counters for progress lines while the run goes on. */
    public Progress progress() {
        return new Progress(log.n, log.submitted.get(), log.committed.get(), log.aborted.get(), log.retried.get(), log.late.get(),
                pool == null ? 0 : pool.waiting());
    }

    /** A snapshot of an emulator's counters. */
    public record Progress(long total, long submitted, long committed, long aborted, long retries, long lateStarts, long waiting) {
        public long inFlight() { return submitted - committed - aborted; }

        public Progress plus(Progress o) {
            return new Progress(total + o.total, submitted + o.submitted, committed + o.committed, aborted + o.aborted, retries + o.retries,
                    lateStarts + o.lateStarts, waiting + o.waiting);
        }
    }

    TxnLog log() { return log; }

    @Override public void close() {
        if (pool != null) pool.close();
        admin.shutdownNow();
        try {
            if (probe != null) probe.close();
        } catch (SQLException ignored) {
            // closing anyway
        }
    }
}
