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
 * A connection to the replica lost while COMMIT is under way leaves it unknown whether the
 * transaction committed here: the executor must stop the site, never report a plain failure
 * (the others committed) nor run it again (it may have committed). Real PostgreSQL: a deferred
 * constraint trigger sleeps at COMMIT while the backend is terminated.
 */
class CommitLostTest {
    static LocalPostgres pg;

    @BeforeAll
    static void start() throws Exception {
        pg = LocalPostgres.startTemporary();
        try (Connection c = pg.connect(); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE t (id int PRIMARY KEY)");
            st.execute("CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(30); RETURN NULL; END $$");
            st.execute("CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON t DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow()");
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

    /** Terminates the backend sleeping in the trigger, once there is one. */
    private static void killTheSleeper() throws Exception {
        try (Connection c = pg.connect(); Statement st = c.createStatement()) {
            long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (System.nanoTime() < end) {
                try (ResultSet rs = st.executeQuery("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE wait_event = 'PgSleep'")) {
                    rs.next();
                    if (rs.getInt(1) > 0) return;
                }
                Thread.sleep(20);
            }
        }
        throw new AssertionError("no backend ever slept in the trigger");
    }

    private static void check(boolean fused) throws Exception {
        try (BackendPool pool = new BackendPool(new BackendTarget(pg.host(), pg.port(), "postgres", ""), 4, Duration.ofSeconds(10));
             WireTxnExecutor ex = new WireTxnExecutor(pool)) {
            CompletableFuture<String> fatal = new CompletableFuture<>();
            ex.onFatal(fatal::complete);
            Txn t = txn(fused ? 1 : 2);
            t.commitWithRequest = fused;   // its turn to commit has come (the engine says so when it runs it)
            CompletableFuture<TxnExecutor.Outcome> executed = new CompletableFuture<>();
            ex.execute(t, fused, executed::complete);
            if (!fused) {
                assertThat(executed.get(20, TimeUnit.SECONDS)).isEqualTo(TxnExecutor.Outcome.OK);
                CompletableFuture<TxnExecutor.Outcome> committed = new CompletableFuture<>();
                ex.commit(t, committed::complete);
                killTheSleeper();
                assertThat(committed.get(20, TimeUnit.SECONDS)).isEqualTo(TxnExecutor.Outcome.ERROR);
            } else {
                killTheSleeper();
                // not RETRY: running it again could commit it twice
                assertThat(executed.get(20, TimeUnit.SECONDS)).isEqualTo(TxnExecutor.Outcome.ERROR);
                CompletableFuture<TxnExecutor.Outcome> committed = new CompletableFuture<>();
                ex.commit(t, committed::complete);
                assertThat(committed.get(20, TimeUnit.SECONDS)).isEqualTo(TxnExecutor.Outcome.ERROR);
            }
            assertThat(fatal.get(5, TimeUnit.SECONDS)).contains("lost during COMMIT");
        }
    }

    @Test
    void theJdbcExecutorAlsoStopsTheSiteOnACommitLostAndRetriesAnExecutionLost() throws Exception {
        try (org.wanrep.exec.JdbcTxnExecutor ex = new org.wanrep.exec.JdbcTxnExecutor(pg.jdbcUrl("postgres"), "postgres", "", 4)) {
            CompletableFuture<String> fatal = new CompletableFuture<>();
            ex.onFatal(fatal::complete);
            // lost while executing: nothing committed, so it runs again (ERROR would mean "fails everywhere")
            TxnRequest r = new TxnRequest(new RequestId("b", 3), TxnRequest.Kind.AUTOCOMMIT, TableSet.of(Set.of(), Set.of("public.t")), "postgres",
                    List.of(WireMessage.query("SELECT pg_sleep(30)")), 0, 0);
            Txn sleeper = new Txn(r, false);
            CompletableFuture<TxnExecutor.Outcome> executed = new CompletableFuture<>();
            ex.execute(sleeper, false, executed::complete);
            killTheSleeper();
            assertThat(executed.get(20, TimeUnit.SECONDS)).isEqualTo(TxnExecutor.Outcome.RETRY);
            assertThat(fatal).isNotDone();

            Txn t = txn(3);
            CompletableFuture<TxnExecutor.Outcome> ok = new CompletableFuture<>();
            ex.execute(t, false, ok::complete);
            assertThat(ok.get(20, TimeUnit.SECONDS)).isEqualTo(TxnExecutor.Outcome.OK);
            CompletableFuture<TxnExecutor.Outcome> committed = new CompletableFuture<>();
            ex.commit(t, committed::complete);
            killTheSleeper();
            assertThat(committed.get(20, TimeUnit.SECONDS)).isEqualTo(TxnExecutor.Outcome.ERROR);
            assertThat(fatal.get(5, TimeUnit.SECONDS)).contains("lost during COMMIT");
        }
    }

    @Test
    void aConnectionLostDuringCommitStopsTheSite() throws Exception {
        check(false);
    }

    @Test
    void aConnectionLostDuringAFusedCommitStopsTheSiteAndIsNotRetried() throws Exception {
        check(true);
    }
}
