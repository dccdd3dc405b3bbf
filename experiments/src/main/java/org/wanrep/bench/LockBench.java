package org.wanrep.bench;

import org.wanrep.lock.LockManager;
import org.wanrep.lock.TableSet;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * Granting with a large backlog (issue 12, part 3): a site that fell behind has its whole backlog
 * queued in the lock manager, and each delivery (enqueue) and each commit (release) must cost what
 * it unblocks, not the backlog. Per workload: enqueue N finally ordered transactions (all queued
 * at once, as after a pause), then commit them in grant order, releasing each as soon as it is
 * granted; times per enqueue and per release+grant. Pure and single-threaded, no PostgreSQL.
 */
public final class LockBench {
    record Result(String workload, int transactions, double enqueueMicros, double releaseMicros, double totalMillis, long grants) {}

    public static List<Result> run(int n, long seed) {
        List<Result> out = new ArrayList<>();
        Random rnd = new Random(seed);
        Map<String, java.util.function.IntFunction<TableSet>> workloads = new LinkedHashMap<>();
        // tpcb-like as today: every transaction writes the same four tables, a chain of n
        workloads.put("tpcb-like (same 4 tables written)", i -> TableSet.of(Set.of(), Set.of("pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history")));
        // the study's mix: 10 updates on random tables of 100, some reads
        workloads.put("random tables (10 of 100, 20% read-only)", i -> {
            Set<String> ts = new java.util.HashSet<>();
            for (int k = 0; k < 10; k++) ts.add("t" + rnd.nextInt(100));
            return rnd.nextInt(5) == 0 ? TableSet.of(ts, Set.of()) : TableSet.of(Set.of(), ts);
        });
        workloads.put("readers of one table", i -> TableSet.of(Set.of("t"), Set.of()));
        for (var w : workloads.entrySet()) {
            List<TableSet> sets = new ArrayList<>(n);
            for (int i = 0; i < n; i++) sets.add(w.getValue().apply(i));
            out.add(measure(w.getKey(), sets));
        }
        return out;
    }

    private static Result measure(String name, List<TableSet> sets) {
        ArrayDeque<Object> ready = new ArrayDeque<>();
        long[] grants = {0};
        LockManager lm = new LockManager(new LockManager.Listener() {
            public void granted(Object t) { ready.add(t); grants[0]++; }
            public void revoked(Object t) { throw new IllegalStateException("no tentative entries here"); }
        });
        int n = sets.size();
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) lm.enqueueFinal(i, sets.get(i));
        long t1 = System.nanoTime();
        int released = 0;
        while (!ready.isEmpty()) { lm.release(ready.poll()); released++; }
        long t2 = System.nanoTime();
        if (released != n || lm.size() != 0) throw new IllegalStateException(name + ": " + released + " of " + n + " committed");
        return new Result(name, n, (t1 - t0) / 1e3 / n, (t2 - t1) / 1e3 / n, (t2 - t0) / 1e6, grants[0]);
    }

    public static void main(String[] args) {
        int n = 100_000;
        long seed = 12;
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (args[i].equals("--transactions")) n = Integer.parseInt(args[i + 1]);
            else if (args[i].equals("--seed")) seed = Long.parseLong(args[i + 1]);
        }
        run(Math.min(n, 10_000), seed);           // warm-up: JIT the paths
        List<Result> rs = run(n, seed);
        System.out.printf(Locale.ROOT, "%-42s %12s %14s %14s %10s%n", "workload", "queued", "us/enqueue", "us/release", "total ms");
        for (Result r : rs)
            System.out.printf(Locale.ROOT, "%-42s %,12d %14.3f %14.3f %10.1f%n", r.workload, r.transactions, r.enqueueMicros, r.releaseMicros, r.totalMillis);
        StringBuilder json = new StringBuilder("{\"bench\":\"lock-bench\",\"transactions\":" + n + ",\"seed\":" + seed + ",\"workloads\":[");
        for (int i = 0; i < rs.size(); i++) {
            Result r = rs.get(i);
            if (i > 0) json.append(',');
            json.append(String.format(Locale.ROOT, "{\"workload\":\"%s\",\"us_per_enqueue\":%.3f,\"us_per_release\":%.3f,\"total_ms\":%.1f}", r.workload, r.enqueueMicros, r.releaseMicros, r.totalMillis));
        }
        System.out.println(json.append("]}"));
    }
}
