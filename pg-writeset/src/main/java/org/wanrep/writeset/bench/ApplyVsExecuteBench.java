package org.wanrep.writeset.bench;

import org.HdrHistogram.Histogram;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.writeset.WriteSet;
import org.wanrep.writeset.apply.WriteSetApplier;
import org.wanrep.writeset.capture.WriteSetCapture;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Applying a write set versus executing the transaction's statements, on the same replica in one
 * run (the study's question: what does shipping write sets save the remote sites?). Each executed
 * transaction is captured, and its write set applied back to the same replica right after: the rows
 * already hold those values, so applying changes nothing but costs the same work.
 * <ul>
 *   <li>{@code update10}: 10 tables x 10,000 rows; 10 {@code UPDATE tN SET v = v + 1 WHERE id = ?}.</li>
 *   <li>{@code join-aggregate}: one UPDATE whose WHERE joins two 10,000-row tables and aggregates,
 *       writing about ten rows: expensive to execute, cheap to apply.</li>
 * </ul>
 * Usage: {@code ApplyVsExecuteBench [--transactions 500] [--warmup 50]}.
 */
public final class ApplyVsExecuteBench {
    static final int TABLES = 10, ROWS = 10_000;

    public static void main(String[] args) throws Exception {
        int n = BenchSupport.intArg(args, "--transactions", 500);
        int warmup = BenchSupport.intArg(args, "--warmup", 50);
        try (LocalPostgres pg = LocalPostgres.startTemporary(); Connection exec = pg.connect(); Connection applyConn = pg.connect()) {
            try (Statement st = exec.createStatement()) {
                for (int t = 0; t < TABLES; t++) {
                    st.execute("CREATE TABLE t" + t + "(id int PRIMARY KEY, v int NOT NULL, pad text NOT NULL)");
                    st.execute("INSERT INTO t" + t + " SELECT g, (random() * 100000)::int, repeat('p', 60) FROM generate_series(1, " + ROWS + ") g");
                    st.execute("ANALYZE t" + t);
                }
            }
            WriteSetCapture.createSlot(exec, "bench_apply");
            List<String> lines = new ArrayList<>();
            StringBuilder json = new StringBuilder("{\"bench\":\"writeset-apply-vs-execute\",\"transactions\":" + n);
            try (WriteSetCapture cap = WriteSetCapture.start(WriteSetCapture.config(pg.jdbcUrl("postgres"), "postgres", "bench_apply"));
                 WriteSetApplier applier = new WriteSetApplier(applyConn, "wanrep_bench")) {
                SplittableRandom rnd = new SplittableRandom(42);
                PreparedStatement[] upd = new PreparedStatement[TABLES];
                for (int t = 0; t < TABLES; t++) upd[t] = exec.prepareStatement("UPDATE t" + t + " SET v = v + 1 WHERE id = ?");
                PreparedStatement heavy = exec.prepareStatement("""
                        UPDATE t0 SET v = v + 1 WHERE id IN (
                          SELECT t1.id FROM t1 JOIN t2 ON t2.id = t1.id
                          GROUP BY t1.id HAVING sum(t1.v + t2.v) % 1000 = ?)""");
                Workload update10 = () -> {
                    for (int t = 0; t < TABLES; t++) {
                        upd[t].setInt(1, 1 + rnd.nextInt(ROWS));
                        if (upd[t].executeUpdate() != 1) throw new IllegalStateException("no row");
                    }
                };
                Workload joinAggregate = () -> {
                    heavy.setInt(1, rnd.nextInt(1000));
                    heavy.executeUpdate();
                };
                for (var w : List.of(new Object[]{"update10", update10}, new Object[]{"join-aggregate", joinAggregate})) {
                    String name = (String) w[0];
                    Histogram execute = BenchSupport.histogram(), apply = BenchSupport.histogram();
                    long rows = 0;
                    exec.setAutoCommit(false);
                    for (int i = 0; i < warmup + n; i++) {
                        String tag = name + "-" + i;
                        CompletableFuture<WriteSet> f = cap.expect(tag);
                        long t0 = System.nanoTime();
                        ((Workload) w[1]).run();
                        try (PreparedStatement tagSt = exec.prepareStatement("SELECT pg_logical_emit_message(true, 'wanrep', ?)")) {
                            long tagStart = System.nanoTime();
                            tagSt.setString(1, tag);
                            tagSt.execute();
                            t0 += System.nanoTime() - tagStart;   // tagging is the middleware's cost, not the transaction's
                        }
                        exec.commit();
                        long t1 = System.nanoTime();
                        WriteSet ws = f.get(10, TimeUnit.SECONDS);
                        long applyNanos = applier.apply(ws).toNanos();
                        if (i >= warmup) {
                            execute.recordValue((t1 - t0) / 1000);
                            apply.recordValue(applyNanos / 1000);
                            rows += ws.rows().size();
                        }
                    }
                    exec.setAutoCommit(true);
                    double ratioMean = apply.getMean() / execute.getMean();
                    double ratioP50 = (double) apply.getValueAtPercentile(50) / execute.getValueAtPercentile(50);
                    lines.add(BenchSupport.row(name + " execute", execute));
                    lines.add(BenchSupport.row(name + " apply", apply));
                    lines.add(String.format(Locale.ROOT, "%-34s rows/txn %.1f   apply/execute mean %.3f   p50 %.3f", name + " ratio",
                            (double) rows / n, ratioMean, ratioP50));
                    json.append(',').append(String.format(Locale.ROOT, "\"%s\":{%s,%s,\"rows_per_txn\":%.1f,\"ratio_mean\":%.3f,\"ratio_p50\":%.3f}",
                            name, BenchSupport.json("execute", execute), BenchSupport.json("apply", apply), (double) rows / n, ratioMean, ratioP50));
                }
            } finally {
                WriteSetCapture.dropSlot(exec, "bench_apply");
            }
            System.out.println("write-set apply vs execute on one replica, " + n + " transactions each (" + TABLES + " tables x " + ROWS + " rows)");
            System.out.println(BenchSupport.header());
            lines.forEach(System.out::println);
            System.out.println(json.append('}'));
        }
    }

    @FunctionalInterface
    interface Workload { void run() throws Exception; }
}
