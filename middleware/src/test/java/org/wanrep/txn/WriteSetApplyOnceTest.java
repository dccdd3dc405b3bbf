package org.wanrep.txn;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.wanrep.backend.BackendTarget;
import org.wanrep.exec.WriteSetChannel;
import org.wanrep.lock.TableSet;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.writeset.ColumnValue;
import org.wanrep.writeset.RowChange;
import org.wanrep.writeset.WriteSet;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Applying a write set is one transaction (rows and sequence positions) and idempotent: a retry of
 * an apply that committed changes nothing. Real PostgreSQL.
 */
class WriteSetApplyOnceTest {
    static LocalPostgres pg;
    static WriteSetChannel channel;

    @BeforeAll
    static void start() throws Exception {
        pg = LocalPostgres.startTemporary();
        try (Connection c = pg.connect(); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE t (id int PRIMARY KEY, v text)");
            st.execute("CREATE SEQUENCE s");
        }
        channel = new WriteSetChannel("b", new BackendTarget(pg.host(), pg.port(), "postgres", ""), 2);
    }

    @AfterAll
    static void stop() throws Exception {
        if (channel != null) channel.close(true);
        if (pg != null) pg.close();
    }

    private static Txn txn(int seq) {
        TxnRequest r = new TxnRequest(new RequestId("a", seq), TxnRequest.Kind.AUTOCOMMIT, TableSet.of(Set.of(), Set.of("public.t", "public.s")),
                "postgres", List.of(), 0, 0);
        Txn t = new Txn(r, false);
        t.originMember = "a.1";
        return t;
    }

    private static WriteSetMessage insert(int seq, int id, Map<String, Long> sequences) {
        RowChange row = new RowChange("public", "t", RowChange.Action.INSERT, List.of(),
                List.of(new ColumnValue("id", "integer", Integer.toString(id)), new ColumnValue("v", "text", "x")));
        return new WriteSetMessage(new RequestId("a", seq), "a.1", true, List.of(), new WriteSet("tag" + seq, List.of(row)), sequences);
    }

    private static TxnExecutor.Outcome apply(Txn t, WriteSetMessage m) throws Exception {
        CompletableFuture<TxnExecutor.Outcome> done = new CompletableFuture<>();
        channel.apply(t, m, done::complete);
        return done.get(20, TimeUnit.SECONDS);
    }

    private static long query(String sql) throws Exception {
        try (Connection c = pg.connect(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void aRetriedApplyOfACommittedWriteSetIsSkipped() throws Exception {
        Txn t = txn(1);
        WriteSetMessage m = insert(1, 1, Map.of("public.s", 42L));
        assertThat(apply(t, m)).isEqualTo(TxnExecutor.Outcome.OK);
        assertThat(query("SELECT count(*) FROM t WHERE id = 1")).isEqualTo(1);
        assertThat(query("SELECT last_value FROM s")).isEqualTo(42);
        // a later transaction moves the sequence on; a re-application would set it back
        query("SELECT nextval('s')");
        // the retry (e.g. after the connection broke while COMMIT's answer was on its way)
        assertThat(apply(t, m)).isEqualTo(TxnExecutor.Outcome.OK);
        assertThat(query("SELECT count(*) FROM t WHERE id = 1")).isEqualTo(1);
        assertThat(query("SELECT last_value FROM s")).isEqualTo(43);
        // another request with the same counter from a later incarnation of the origin is applied
        Txn later = txn(1);
        later.originMember = "a.2";
        assertThat(apply(later, insert(1, 2, Map.of()))).isEqualTo(TxnExecutor.Outcome.OK);
        assertThat(query("SELECT count(*) FROM t WHERE id = 2")).isEqualTo(1);
    }

    @Test
    void rowsAndSequencesCommitTogetherOrNotAtAll() throws Exception {
        // the sequence does not exist here: the whole apply fails, and no row of it may stay behind
        Txn t = txn(2);
        TxnExecutor.Outcome o = apply(t, insert(2, 10, Map.of("public.missing", 5L)));
        assertThat(o).isNotEqualTo(TxnExecutor.Outcome.OK);
        assertThat(query("SELECT count(*) FROM t WHERE id = 10")).isZero();
        // and it was not recorded as applied: once the sequence exists, the retry applies all of it
        try (Connection c = pg.connect(); Statement st = c.createStatement()) {
            st.execute("CREATE SEQUENCE missing");
        }
        assertThat(apply(t, insert(2, 10, Map.of("public.missing", 5L)))).isEqualTo(TxnExecutor.Outcome.OK);
        assertThat(query("SELECT count(*) FROM t WHERE id = 10")).isEqualTo(1);
        assertThat(query("SELECT last_value FROM missing")).isEqualTo(5);
    }
}
