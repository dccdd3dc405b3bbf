package org.wanrep.writeset.capture;

import org.junit.jupiter.api.Test;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.writeset.WriteSet;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A hand-over that fails unexpectedly: the waiter gets the failure instead of waiting forever, and
 * the slot is not acknowledged past that transaction. Real PostgreSQL with wal2json.
 */
class HandOverFailureTest {
    private static String commitTagged(Connection c, String tag) throws Exception {
        c.setAutoCommit(false);
        try (Statement st = c.createStatement()) {
            st.execute("INSERT INTO t VALUES (DEFAULT)");
            st.execute("SELECT pg_logical_emit_message(true, 'wanrep', '" + tag + "')");
            c.commit();
        }
        c.setAutoCommit(true);
        return lsn(c, "SELECT pg_current_wal_lsn()");
    }

    private static String lsn(Connection c, String sql) throws Exception {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** True if LSN a lies at or before b. */
    private static boolean atOrBefore(Connection c, String a, String b) throws Exception {
        return lsn(c, "SELECT ('" + a + "'::pg_lsn <= '" + b + "'::pg_lsn)::text").equals("true");
    }

    @Test
    void theWaiterGetsTheFailureAndTheSlotIsNotConfirmedPastIt() throws Exception {
        try (LocalPostgres pg = LocalPostgres.startTemporary(); Connection c = pg.connect()) {
            try (Statement st = c.createStatement()) { st.execute("CREATE TABLE t (id serial PRIMARY KEY)"); }
            WriteSetCapture.createSlot(c, "ws");
            WriteSetCapture cap = WriteSetCapture.start(WriteSetCapture.config(pg.jdbcUrl("postgres"), "postgres", "ws")
                    .statusInterval(Duration.ofMillis(50))
                    .beforeHandOver(ws -> { if (ws.tag().equals("boom")) throw new IllegalStateException("injected hand-over failure"); }));
            try {
                CompletableFuture<WriteSet> first = cap.expect("first");
                commitTagged(c, "first");
                assertThat(first.get(20, TimeUnit.SECONDS).rows()).hasSize(1);

                String beforeBoom = lsn(c, "SELECT pg_current_wal_lsn()");
                CompletableFuture<WriteSet> boom = cap.expect("boom");
                String afterBoom = commitTagged(c, "boom");
                assertThatThrownBy(() -> boom.get(20, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                        .hasMessageContaining("injected hand-over failure");

                // a later transaction is not handed over either (acknowledging it would acknowledge boom)
                CompletableFuture<WriteSet> later = cap.expect("later");
                commitTagged(c, "later");
                assertThatThrownBy(() -> later.get(20, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
                assertThat((Throwable) cap.failure()).isNotNull();

                Thread.sleep(1000);   // many status intervals
                String confirmed = lsn(c, "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = 'ws'");
                assertThat(atOrBefore(c, confirmed, beforeBoom)).as("confirmed %s, boom started after %s, ended before %s", confirmed, beforeBoom, afterBoom).isTrue();
            } finally {
                cap.close();
            }
        }
    }
}
