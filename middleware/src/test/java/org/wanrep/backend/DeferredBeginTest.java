package org.wanrep.backend;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.wire.Messages;
import org.wanrep.wire.PayloadWriter;
import org.wanrep.wire.WireMessage;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A BEGIN deferred to the next request ({@link BackendConnection#deferBegin}) on a real PostgreSQL: the request runs
 * inside the block, the caller sees only the request's answers, and a BEGIN PostgreSQL refuses lets nothing after it
 * run outside a block (it would commit there, at this site only).
 */
class DeferredBeginTest {
    private static LocalPostgres pg;
    private static BackendTarget target;

    @BeforeAll
    static void start() throws Exception {
        pg = LocalPostgres.startTemporary();
        target = new BackendTarget("127.0.0.1", pg.port(), "postgres", null, pg.dataDir().toString());
        try (BackendConnection c = open()) {
            assertThat(c.run("CREATE TABLE t (k int PRIMARY KEY)")).isNull();
        }
    }

    @AfterAll
    static void stop() throws Exception { if (pg != null) pg.close(); }

    @BeforeEach
    void empty() throws IOException {
        try (BackendConnection c = open()) {
            assertThat(c.run("TRUNCATE t")).isNull();
        }
    }

    private static BackendConnection open() throws IOException { return BackendConnection.open(target, "postgres", Map.of()); }

    private static long rows() throws IOException {
        try (BackendConnection c = open()) {
            List<List<String>> out = new ArrayList<>();
            assertThat(c.runCollecting("SELECT count(*) FROM t", out::add)).isNull();
            return Long.parseLong(out.get(0).get(0));
        }
    }

    /** Parse/Bind/Execute/Sync of {@code sql}, unnamed. */
    private static List<WireMessage> extended(String sql) {
        return List.of(new PayloadWriter().cstring("").cstring(sql).int16(0).message('P'),
                new PayloadWriter().cstring("").cstring("").int16(0).int16(0).int16(0).message('B'),
                new PayloadWriter().cstring("").int32(0).message('E'), Messages.SYNC);
    }

    /** Sends {@code request}, reads every answer; the kinds of the answers the caller gets. */
    private static String answerKinds(BackendConnection c, List<WireMessage> request) throws IOException {
        for (WireMessage m : request) c.send(m);
        c.flush();
        StringBuilder kinds = new StringBuilder();
        while (!c.tracker().idle()) kinds.append(c.read().kind());
        return kinds.toString();
    }

    @Test
    void theNextQueryRunsInsideTheBlockAndOnlyItsAnswersArrive() throws IOException {
        try (BackendConnection c = open()) {
            c.deferBegin();
            assertThat(c.status()).as("status once BEGIN is answered for").isEqualTo('T');
            assertThat(answerKinds(c, List.of(WireMessage.query("INSERT INTO t VALUES (1)")))).isEqualTo("CZ");
            assertThat(c.status()).isEqualTo('T');
            assertThat(rows()).as("rows another session sees: the insert is uncommitted").isZero();
            assertThat(c.run("ROLLBACK")).isNull();
            assertThat(c.status()).isEqualTo('I');
            assertThat(rows()).isZero();

            c.deferBegin();
            assertThat(c.runEach(List.of("INSERT INTO t VALUES (2)", "INSERT INTO t VALUES (3)"))).allSatisfy(r -> assertThat(r.error()).isNull());
            assertThat(rows()).isZero();
            assertThat(c.runForTags("COMMIT")).containsExactly("COMMIT");
            assertThat(rows()).isEqualTo(2);
            assertThat(c.isBroken()).isFalse();
        }
    }

    @Test
    void anExtendedRequestGetsItsBeginAsARoundTripOfItsOwn() throws IOException {
        try (BackendConnection c = open()) {
            c.deferBegin();
            assertThat(answerKinds(c, extended("INSERT INTO t VALUES (1)"))).isEqualTo("12CZ");
            assertThat(c.status()).isEqualTo('T');
            assertThat(rows()).isZero();
            assertThat(c.run("ROLLBACK")).isNull();
            assertThat(rows()).isZero();
        }
    }

    @Test
    void aBeginPostgresRefusesLetsNothingOfTheQueryAfterItRun() throws IOException {
        // refused at Parse (two commands in one prepared statement): PostgreSQL then skips up to a Sync
        try (BackendConnection c = open()) {
            c.deferBegin("BEGIN; SELECT 1");
            assertThatThrownBy(() -> answerKinds(c, List.of(WireMessage.query("INSERT INTO t VALUES (1)")))).isInstanceOf(BackendException.class)
                    .hasMessageContaining("did not begin the transaction block").hasMessageContaining("nothing of the request");
            assertThat(c.isBroken()).isTrue();
        }
        try (BackendConnection c = open()) {   // a request with a Sync of its own: skipped up to it
            c.deferBegin("BEGIN; SELECT 1");
            List<WireMessage> request = new ArrayList<>(List.of(WireMessage.query("INSERT INTO t VALUES (2)")));
            request.addAll(extended("INSERT INTO t VALUES (3)"));
            assertThatThrownBy(() -> answerKinds(c, request)).isInstanceOf(BackendException.class);
        }
        assertThat(rows()).as("rows committed outside any block").isZero();
    }

    @Test
    void aBeginPostgresRefusesAheadOfAnExtendedRequestStopsItBeforeItIsSent() throws IOException {
        try (BackendConnection c = open()) {
            c.deferBegin("BEGIN; SELECT 1/0");   // a simple query: it fails the block it opened
            assertThatThrownBy(() -> answerKinds(c, extended("INSERT INTO t VALUES (1)"))).isInstanceOf(BackendException.class)
                    .hasMessageContaining("division by zero");
        }
        assertThat(rows()).isZero();
    }

    @Test
    void onlyAnIdleConnectionDefersItsBegin() throws IOException {
        try (BackendConnection c = open()) {
            assertThat(c.run("BEGIN")).isNull();
            assertThatThrownBy(c::deferBegin).isInstanceOf(IllegalStateException.class);
            assertThat(c.run("ROLLBACK")).isNull();
            c.deferBegin();
            assertThatThrownBy(c::deferBegin).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(c::read).as("a read with nothing sent would wait for ever").isInstanceOf(IllegalStateException.class);
        }
    }

    /** Set-up statements go guarded after the BEGIN: their rows to the taker, the caller sees only the Query's answers. */
    @Test
    void aSetUpGoesWithTheBeginAndOnlyItsRowsArrive() throws IOException {
        try (BackendConnection c = open()) {
            c.deferBegin();
            List<List<String>> rows = new ArrayList<>();
            c.deferSetUp(List.of("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
                    "SELECT pg_catalog.set_config('wanrep.x', 'y', true), pg_catalog.current_setting('max_prepared_transactions')"), rows::add);
            assertThat(answerKinds(c, List.of(WireMessage.query("INSERT INTO t VALUES (1)")))).isEqualTo("CZ");
            assertThat(rows).hasSize(1);
            assertThat(rows.get(0).get(0)).isEqualTo("y");
            List<List<String>> in = new ArrayList<>();
            assertThat(c.runCollecting("SELECT pg_catalog.current_setting('transaction_isolation'), pg_catalog.current_setting('wanrep.x')", in::add)).isNull();
            assertThat(in.get(0)).containsExactly("repeatable read", "y");
            assertThat(rows()).isZero();
            assertThat(c.run("COMMIT")).isNull();
            assertThat(rows()).isEqualTo(1);
            // the next block has none of it
            c.deferBegin();
            assertThat(answerKinds(c, List.of(WireMessage.query("INSERT INTO t VALUES (2)")))).isEqualTo("CZ");
            assertThat(c.runForTags("ROLLBACK")).containsExactly("ROLLBACK");
            assertThat(rows).hasSize(1);
        }
    }

    @Test
    void aSetUpPostgresRefusesLetsNothingOfTheQueryRunAndEndsTheConnection() throws IOException {
        try (BackendConnection c = open()) {
            c.deferBegin();
            c.deferSetUp(List.of("SELECT 1/0"), r -> { });
            assertThatThrownBy(() -> answerKinds(c, List.of(WireMessage.query("INSERT INTO t VALUES (1)"))))
                    .isInstanceOf(BackendException.class).hasMessageContaining("did not set up the transaction block")
                    .hasMessageContaining("division by zero");
            assertThat(c.isBroken()).isTrue();
        }
        try (BackendConnection c = open()) {
            c.deferBegin();
            c.deferSetUp(List.of("SELECT 1"), r -> { });
            assertThatThrownBy(() -> answerKinds(c, extended("INSERT INTO t VALUES (2)"))).as("ahead of an extended request it would use the client's unnamed statement")
                    .isInstanceOf(IllegalStateException.class);
        }
        try (BackendConnection c = open()) {
            assertThatThrownBy(() -> c.deferSetUp(List.of("SELECT 1"), r -> { })).isInstanceOf(IllegalStateException.class);
        }
        assertThat(rows()).isZero();
    }
}
