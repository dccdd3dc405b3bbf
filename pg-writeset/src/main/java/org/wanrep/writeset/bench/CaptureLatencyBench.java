package org.wanrep.writeset.bench;

import org.HdrHistogram.Histogram;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.writeset.WriteSet;
import org.wanrep.writeset.capture.WriteSetCapture;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Capture latency: from the moment a small tagged transaction's COMMIT returns to the moment its
 * write set is in hand (wal2json decoding, replication protocol, parsing, hand-over), on a throw-away
 * local replica. Usage: {@code CaptureLatencyBench [--transactions 2000] [--warmup 200]}.
 * <p>
 * With synchronous_commit = on the committing backend flushes WAL itself and wakes the walsenders,
 * so wal_writer_delay (which paces only asynchronous commits) does not enter the latency.
 */
public final class CaptureLatencyBench {
    public static void main(String[] args) throws Exception {
        int n = BenchSupport.intArg(args, "--transactions", 2000);
        int warmup = BenchSupport.intArg(args, "--warmup", 200);
        try (LocalPostgres pg = LocalPostgres.startTemporary(); Connection c = pg.connect()) {
            String settings;
            try (Statement st = c.createStatement()) {
                st.execute("CREATE TABLE bench(id int PRIMARY KEY, v int NOT NULL, note text)");
                st.execute("INSERT INTO bench SELECT g, 0, 'row ' || g FROM generate_series(1, 1000) g");
                try (ResultSet rs = st.executeQuery("SELECT current_setting('synchronous_commit'), current_setting('wal_writer_delay'), current_setting('fsync')")) {
                    rs.next();
                    settings = "synchronous_commit=" + rs.getString(1) + " wal_writer_delay=" + rs.getString(2) + " fsync=" + rs.getString(3);
                }
            }
            WriteSetCapture.createSlot(c, "bench");
            Histogram capture = BenchSupport.histogram(), commit = BenchSupport.histogram();
            try (WriteSetCapture cap = WriteSetCapture.start(WriteSetCapture.config(pg.jdbcUrl("postgres"), "postgres", "bench"));
                 PreparedStatement upd = c.prepareStatement("UPDATE bench SET v = v + 1 WHERE id = ?");
                 PreparedStatement tag = c.prepareStatement("SELECT pg_logical_emit_message(true, 'wanrep', ?)")) {
                c.setAutoCommit(false);
                for (int i = 0; i < warmup + n; i++) {
                    String t = "cap-" + i;
                    CompletableFuture<WriteSet> f = cap.expect(t);
                    upd.setInt(1, 1 + i % 1000);
                    upd.executeUpdate();
                    tag.setString(1, t);
                    tag.execute();
                    long t0 = System.nanoTime();
                    c.commit();
                    long t1 = System.nanoTime();
                    WriteSet ws = f.get(10, TimeUnit.SECONDS);
                    long t2 = System.nanoTime();
                    if (ws.rows().size() != 1) throw new IllegalStateException("expected one row, got " + ws.rows().size());
                    if (i >= warmup) {
                        commit.recordValue((t1 - t0) / 1000);
                        capture.recordValue((t2 - t1) / 1000);
                    }
                }
                c.setAutoCommit(true);
            } finally {
                WriteSetCapture.dropSlot(c, "bench");
            }
            System.out.println("write-set capture latency, " + n + " single-row transactions (" + settings + ")");
            System.out.println(BenchSupport.header());
            System.out.println(BenchSupport.row("local COMMIT", commit));
            System.out.println(BenchSupport.row("COMMIT returned -> write set", capture));
            System.out.println("{\"bench\":\"writeset-capture-latency\",\"transactions\":" + n + ","
                    + BenchSupport.json("commit", commit) + "," + BenchSupport.json("capture", capture) + "}");
        }
    }
}
