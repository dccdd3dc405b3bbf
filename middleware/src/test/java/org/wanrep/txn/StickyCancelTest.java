package org.wanrep.txn;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.wanrep.backend.BackendPool;
import org.wanrep.backend.BackendTarget;
import org.wanrep.exec.WireTxnExecutor;
import org.wanrep.lock.TableSet;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.wire.WireMessage;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine cancels an attempt it revoked (opt-safe: a final delivery overtook its tentative grant). The cancel
 * must hold even when it comes before the attempt started or before its request reached the backend (a
 * CancelRequest that finds the backend idle is dropped): a revoked attempt left running can wait for ever on row
 * locks of what the final order put first (a certified block's prepared transaction), while that waits for the
 * attempt's rollback. Real PostgreSQL.
 */
class StickyCancelTest {
    static LocalPostgres pg;

    @BeforeAll
    static void start() throws Exception {
        pg = LocalPostgres.startTemporary();
        try (Connection c = pg.connect(); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE t (id int PRIMARY KEY)");
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (pg != null) pg.close();
    }

    private static Txn txn(int id) {
        TxnRequest r = new TxnRequest(new RequestId("b", id), TxnRequest.Kind.AUTOCOMMIT, TableSet.of(Set.of(), Set.of("public.t")), "postgres",
                List.of(WireMessage.query("INSERT INTO t VALUES (" + id + ")")), 0, 0);
        return new Txn(r, false);
    }

    private static int rows(int id) throws Exception {
        try (Connection c = pg.connect(); Statement st = c.createStatement(); ResultSet r = st.executeQuery("SELECT count(*) FROM t WHERE id = " + id)) {
            r.next();
            return r.getInt(1);
        }
    }

    private static TxnExecutor.Outcome execute(WireTxnExecutor ex, Txn t, boolean commit) throws Exception {
        CompletableFuture<TxnExecutor.Outcome> o = new CompletableFuture<>();
        ex.execute(t, commit, o::complete);
        return o.get(20, TimeUnit.SECONDS);
    }

    private static void rollback(WireTxnExecutor ex, Txn t) throws Exception {
        CompletableFuture<TxnExecutor.Outcome> o = new CompletableFuture<>();
        ex.rollback(t, o::complete);
        o.get(20, TimeUnit.SECONDS);
    }

    @Test
    void aCancelBeforeTheAttemptStartsKeepsItFromRunningUntilTheRollback() throws Exception {
        try (BackendPool pool = new BackendPool(new BackendTarget(pg.host(), pg.port(), "postgres", ""), 2, Duration.ofSeconds(10));
             WireTxnExecutor ex = new WireTxnExecutor(pool)) {
            Txn t = txn(1);
            ex.cancel(t);   // revoked after it was dispatched, before it ran
            assertThat(execute(ex, t, false)).isEqualTo(TxnExecutor.Outcome.RETRY);
            rollback(ex, t);
            assertThat(rows(1)).isZero();
            // the next attempt (granted again) runs and commits
            assertThat(execute(ex, t, true)).isEqualTo(TxnExecutor.Outcome.OK);
            CompletableFuture<TxnExecutor.Outcome> committed = new CompletableFuture<>();
            ex.commit(t, committed::complete);
            assertThat(committed.get(20, TimeUnit.SECONDS)).isEqualTo(TxnExecutor.Outcome.OK);
            assertThat(rows(1)).isOne();
            ex.finish(t);
        }
    }

    @Test
    void aCancelledAttemptWaitingOnARowLockReturns() throws Exception {
        try (BackendPool pool = new BackendPool(new BackendTarget(pg.host(), pg.port(), "postgres", ""), 2, Duration.ofSeconds(10));
             WireTxnExecutor ex = new WireTxnExecutor(pool);
             Connection holder = pg.connect()) {
            holder.setAutoCommit(false);
            try (Statement st = holder.createStatement()) {
                st.execute("INSERT INTO t VALUES (2)");   // the attempt's insert waits on this row
            }
            Txn t = txn(2);
            CompletableFuture<TxnExecutor.Outcome> o = new CompletableFuture<>();
            ex.execute(t, false, o::complete);
            awaitLockWait();
            ex.cancel(t);
            assertThat(o.get(20, TimeUnit.SECONDS)).isEqualTo(TxnExecutor.Outcome.RETRY);
            rollback(ex, t);
            holder.rollback();
            assertThat(rows(2)).isZero();
            ex.finish(t);
        }
    }

    private static void awaitLockWait() throws Exception {
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        try (Connection c = pg.connect(); Statement st = c.createStatement()) {
            while (System.nanoTime() < end) {
                try (ResultSet r = st.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")) {
                    r.next();
                    if (r.getInt(1) > 0) return;
                }
                Thread.sleep(20);
            }
        }
        throw new AssertionError("the attempt never waited on the row lock");
    }
}
