package org.wanrep.writeset.capture;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.pg.TableDigest;
import org.wanrep.writeset.ColumnValue;
import org.wanrep.writeset.RowChange;
import org.wanrep.writeset.WriteSet;
import org.wanrep.writeset.WriteSetRefusedException;
import org.wanrep.writeset.apply.WriteSetApplier;
import org.wanrep.writeset.codec.WriteSetCodec;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Capture at PREPARE TRANSACTION on server A (test_decoding, two-phase slot), ship through the codec,
 * apply on server B, COMMIT PREPARED on A, compare with TableDigest. Real PostgreSQL servers.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PreparedCaptureTest {
    static final String SCHEMA = """
            CREATE SCHEMA "My Schema";
            CREATE TYPE "My Schema"."odd ]: ""type\"\"\" AS ENUM ('x', 'y z', 'it''s');
            CREATE TABLE types(id int PRIMARY KEY, c char(84), c1 char, vc varchar(10), n numeric(10,2), nu numeric, f float8, re real,
              i8 bigint, bo boolean, bi bit(4), vb varbit(8), by bytea, tx text, ia int[], ta text[], j jsonb, ts timestamptz,
              e "My Schema"."odd ]: ""type\"\"\", big text, "Odd]: col" text);
            ALTER TABLE types ALTER big SET STORAGE EXTERNAL;
            CREATE TABLE "My Schema"."Tab ""q"" ]:"(id int PRIMARY KEY, "x y" text, "w]:""e" varchar(3));
            CREATE TABLE fullid(a int, b text, c char(4));
            ALTER TABLE fullid REPLICA IDENTITY FULL;
            CREATE TABLE ui(a int NOT NULL, b int NOT NULL, c text);
            CREATE UNIQUE INDEX ui_idx ON ui(b, a);
            ALTER TABLE ui REPLICA IDENTITY USING INDEX ui_idx;
            CREATE TABLE acct(id int PRIMARY KEY, bal numeric(12,2) NOT NULL);
            CREATE TABLE nopk(x int, y text);
            CREATE TABLE nothing(id int PRIMARY KEY, v text);
            ALTER TABLE nothing REPLICA IDENTITY NOTHING;
            """;
    static final List<String> REPLICATED = List.of("public.types", "My Schema.Tab \"q\" ]:", "public.fullid", "public.ui", "public.acct");

    LocalPostgres a, b;
    Connection ca, ca2, cb, applyConn;
    PreparedCapture cap;
    WriteSetApplier applier;
    int gids;

    @BeforeAll
    void start() throws Exception {
        a = LocalPostgres.startTemporary();
        b = LocalPostgres.startTemporary();
        ca = a.connect();
        ca2 = a.connect();
        cb = b.connect();
        for (Connection c : List.of(ca, cb)) try (Statement st = c.createStatement()) { st.execute(SCHEMA); }
        assertThat(PreparedCapture.createSlot(ca, "pc_a")).isTrue();
        assertThat(PreparedCapture.createSlot(ca, "pc_a")).isFalse();
        try (Statement st = ca.createStatement(); ResultSet rs = st.executeQuery("SELECT plugin, two_phase FROM pg_replication_slots WHERE slot_name = 'pc_a'")) {
            rs.next();
            assertThat(rs.getString(1)).isEqualTo("test_decoding");
            assertThat(rs.getBoolean(2)).isTrue();
        }
        cap = PreparedCapture.start(PreparedCapture.config(a.jdbcUrl("postgres"), "postgres", "pc_a").statusInterval(Duration.ofMillis(100)));
        assertThat(cap.isConnected() || waitFor(cap::isConnected)).isTrue();
        applyConn = b.connect();
        applier = new WriteSetApplier(applyConn, "wanrep_site_a");
    }

    @AfterAll
    void stop() throws Exception {
        if (cap != null) cap.close();
        if (applier != null) applier.close();
        for (AutoCloseable c : new AutoCloseable[]{applyConn, ca, ca2, cb, a, b}) if (c != null) c.close();
    }

    static void exec(Connection c, String... sql) throws SQLException {
        try (Statement st = c.createStatement()) { for (String s : sql) st.execute(s); }
    }

    /** Runs statements in a transaction on A and prepares it as a fresh gid, expected beforehand. */
    record Prepared(String gid, CompletableFuture<WriteSet> future) {}

    Prepared prepare(Connection c, String... sql) throws SQLException {
        String gid = "g " + (++gids) + " 'q' \\";
        CompletableFuture<WriteSet> f = cap.expect(gid);
        exec(c, "BEGIN");
        try {
            exec(c, sql);
            exec(c, "PREPARE TRANSACTION '" + gid.replace("'", "''") + "'");
        } catch (SQLException e) {
            exec(c, "ROLLBACK");
            throw e;
        }
        return new Prepared(gid, f);
    }

    static String lit(String gid) { return "'" + gid.replace("'", "''") + "'"; }

    /** Prepare on A, capture before the commit, encode, decode, apply on B, then COMMIT PREPARED on A. */
    WriteSet ship(String... sql) throws Exception {
        Prepared p = prepare(ca, sql);
        WriteSet ws;
        try {
            ws = p.future().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            exec(ca, "ROLLBACK PREPARED " + lit(p.gid()));
            throw e;
        }
        assertThat(ws.tag()).isEqualTo(p.gid());
        WriteSet received = WriteSetCodec.decode(WriteSetCodec.encode(ws));
        assertThat(received).isEqualTo(ws);
        applier.apply(received);
        exec(ca, "COMMIT PREPARED " + lit(p.gid()));
        return ws;
    }

    void assertSameContents() throws SQLException {
        Map<String, TableDigest.Digest> da = TableDigest.of(ca), db = TableDigest.of(cb);
        for (String t : REPLICATED) assertThat(db.get(t)).as(t).isNotNull().isEqualTo(da.get(t));
    }

    static boolean waitFor(BooleanSupplier cond) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < end) {
            if (cond.getAsBoolean()) return true;
            Thread.sleep(10);
        }
        return cond.getAsBoolean();
    }

    @Test
    void preparedTransactionsRoundTripExactly() throws Exception {
        WriteSet ins = ship("""
                INSERT INTO types VALUES (1, 'fixed width', 'x', 'héllo''s', 12345678.91, 123456789012345678901234567890.123456789, 'NaN', '-Infinity',
                  -9223372036854775808, true, B'0101', B'101', '\\x00ff10', E'line1\\nline2 \\\\ back\\ttab ''q'' "dq" 新 🎉', '{1,NULL,3}',
                  '{"a b","c,\\"d",NULL,""}', '{"k": [1, 2.50, null]}', '2024-01-02 03:04:05.123456+02', 'it''s',
                  (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 200) g), 'odd ]: value')""",
                "INSERT INTO types(id) VALUES (2)",
                "INSERT INTO types(id, c, c1, vc, f, re, bo, bi, vb, by, tx, e) VALUES (3, '', ' ', '', 'Infinity', 1e-45, false, B'0000', B'', '\\x', '', 'y z')",
                "INSERT INTO \"My Schema\".\"Tab \"\"q\"\" ]:\" VALUES (1, 'a', 'abc'), (2, NULL, '')",
                "INSERT INTO fullid VALUES (1, NULL, 'ab'), (2, 'b', NULL), (3, 'c', 'cc')",
                "INSERT INTO ui VALUES (1, 2, 'c'), (3, 4, NULL)",
                "INSERT INTO acct SELECT g, g * 10 FROM generate_series(1, 20) g");
        RowChange first = ins.rows().get(0);
        assertThat(first.key()).isEmpty();
        // without modifiers (a cast to character or bit would be char(1) or bit(1)): the column applies its own
        assertThat(first.values()).extracting(ColumnValue::type).startsWith("integer", "bpchar", "bpchar",
                "character varying", "numeric", "numeric", "double precision", "real", "bigint", "boolean", "\"bit\"", "bit varying");
        assertThat(first.values()).filteredOn(v -> v.name().equals("e")).singleElement()
                .isEqualTo(new ColumnValue("e", "\"My Schema\".\"odd ]: \"\"type\"\"\"", "it's"));
        assertThat(first.values()).filteredOn(v -> v.name().equals("tx")).singleElement()
                .extracting(ColumnValue::value).isEqualTo("line1\nline2 \\ back\ttab 'q' \"dq\" 新 🎉");
        assertSameContents();

        WriteSet upd = ship("UPDATE types SET vc = 'upd', c = 'changed' WHERE id = 1",   // big stays TOASTed and unchanged
                "UPDATE types SET id = 20 WHERE id = 2",                                   // key change: old-key
                "DELETE FROM types WHERE id = 3",
                "UPDATE \"My Schema\".\"Tab \"\"q\"\" ]:\" SET \"x y\" = 'w', \"w]:\"\"e\" = 'zz' WHERE id = 2",
                "UPDATE fullid SET b = 'was null' WHERE a = 1",
                "DELETE FROM fullid WHERE a = 2",
                "UPDATE fullid SET c = 'new' WHERE a = 3",
                "UPDATE ui SET c = 'd' WHERE a = 1", "UPDATE ui SET a = 7 WHERE a = 3", "DELETE FROM ui WHERE a = 1",
                "UPDATE acct SET bal = bal * 1.05 WHERE id % 3 = 0", "UPDATE acct SET id = id + 100 WHERE id > 15", "DELETE FROM acct WHERE id < 5");
        RowChange toast = upd.rows().get(0);
        assertThat(toast.action()).isEqualTo(RowChange.Action.UPDATE);
        assertThat(toast.values()).extracting(ColumnValue::name).doesNotContain("big").contains("vc", "c");
        assertThat(toast.key()).containsExactly(new ColumnValue("id", "integer", "1"));
        assertThat(upd.rows().get(1).key()).containsExactly(new ColumnValue("id", "integer", "2"));
        RowChange full = upd.rows().stream().filter(r -> r.table().equals("fullid")).findFirst().orElseThrow();
        assertThat(full.key()).containsExactly(new ColumnValue("a", "integer", "1"), new ColumnValue("b", "text", null),
                new ColumnValue("c", "bpchar", "ab  "));
        RowChange uiKeyChange = upd.rows().stream().filter(r -> r.table().equals("ui") && r.key().get(0).value().equals("3")).findFirst().orElseThrow();
        assertThat(uiKeyChange.key()).containsExactly(new ColumnValue("a", "integer", "3"), new ColumnValue("b", "integer", "4"));
        assertSameContents();
        try (Statement st = cb.createStatement(); ResultSet rs = st.executeQuery("SELECT length(big), c, n::text FROM types WHERE id = 1")) {
            rs.next();
            assertThat(rs.getInt(1)).isEqualTo(6400);
            assertThat(rs.getString(2)).isEqualTo(String.format("%-84s", "changed"));
            assertThat(rs.getString(3)).isEqualTo("12345678.91");
        }
    }

    /**
     * Descriptions of tables are kept between prepared transactions (one catalog lookup, not one per transaction) and
     * follow the schema: a wider char(n), a new column, another type, a full replica identity. Each change is applied at
     * B from the capture and the tables compared: a stale description would cut the wider value, miss the column, or
     * look the row up by the wrong identity.
     */
    @Test
    void keptTableDescriptionsFollowSchemaChanges() throws Exception {
        for (Connection c : List.of(ca, cb)) exec(c, "CREATE TABLE evolving(id int PRIMARY KEY, c char(3), n int)");
        long before = cap.lookups.get();
        ship("INSERT INTO evolving VALUES (1, 'ab', 1)");
        ship("INSERT INTO evolving VALUES (2, 'cd', 2)");
        ship("UPDATE evolving SET n = n + 1 WHERE id = 1");
        assertThat(cap.lookups.get() - before).as("catalog lookups for three transactions on one table").isEqualTo(1);
        for (Connection c : List.of(ca, cb)) exec(c, "ALTER TABLE evolving ALTER c TYPE char(10)");
        ship("UPDATE evolving SET c = 'abcdefghij' WHERE id = 1");
        for (Connection c : List.of(ca, cb)) exec(c, "ALTER TABLE evolving ADD COLUMN z text");
        ship("INSERT INTO evolving VALUES (3, 'x', 3, 'zzz')", "UPDATE evolving SET z = 'y' WHERE id = 2");
        for (Connection c : List.of(ca, cb)) exec(c, "ALTER TABLE evolving ALTER n TYPE numeric(6,2)");
        ship("UPDATE evolving SET n = 2.25 WHERE id = 3");
        for (Connection c : List.of(ca, cb)) exec(c, "ALTER TABLE evolving REPLICA IDENTITY FULL");
        ship("UPDATE evolving SET z = 'full' WHERE id = 1", "DELETE FROM evolving WHERE id = 2");
        // the schema change and the rows in one transaction: the printed rows no longer fit the kept description
        Prepared p = prepare(ca, "ALTER TABLE evolving ADD COLUMN w int DEFAULT 7", "INSERT INTO evolving VALUES (4, 'q', 4, 'w', 8)");
        assertThatThrownBy(() -> p.future().get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(WriteSetRefusedException.class);
        exec(ca, "ROLLBACK PREPARED " + lit(p.gid()));
        Map<String, TableDigest.Digest> da = TableDigest.of(ca), db = TableDigest.of(cb);
        assertThat(db.get("public.evolving")).isEqualTo(da.get("public.evolving"));
        try (Statement st = cb.createStatement(); ResultSet rs = st.executeQuery("SELECT c, n::text, z FROM evolving ORDER BY id")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("abcdefghij");
            assertThat(rs.getString(3)).isEqualTo("full");
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(2)).isEqualTo("2.25");
            assertThat(rs.next()).isFalse();
        }
    }

    @Test
    void ordinaryTransactionsInterleavedWithPreparedOnesAreNeverHandedOver() throws Exception {
        try {
            interleaved();
        } finally {
            for (String sql : List.of("ROLLBACK", "DELETE FROM acct WHERE id >= 1000")) exec(ca2, sql);
            exec(cb, "DELETE FROM acct WHERE id >= 1000");
        }
    }

    void interleaved() throws Exception {
        exec(ca2, "BEGIN", "INSERT INTO acct VALUES (1000, 1)");                 // ordinary, open across the prepare
        Prepared p = prepare(ca, "INSERT INTO acct VALUES (1001, 2)");
        exec(ca2, "INSERT INTO acct VALUES (1002, 3)", "COMMIT");
        exec(ca2, "INSERT INTO acct SELECT g, 0 FROM generate_series(2000, 2100) g");   // autocommit
        CompletableFuture<WriteSet> ordinary = cap.expect("");
        WriteSet ws = p.future().get(10, TimeUnit.SECONDS);
        assertThat(ws.rows()).singleElement().satisfies(r -> assertThat(r.values()).contains(new ColumnValue("id", "integer", "1001")));
        exec(ca, "ROLLBACK PREPARED " + lit(p.gid()));
        // the second of two interleaved prepared transactions, and one prepared by the other session
        Prepared q1 = prepare(ca, "INSERT INTO acct VALUES (1003, 4)");
        Prepared q2 = prepare(ca2, "INSERT INTO acct VALUES (1004, 5)", "SELECT pg_logical_emit_message(true, 'wanrep', 'ignored')");
        exec(ca, "COMMIT PREPARED " + lit(q1.gid()));
        assertThat(q2.future().get(10, TimeUnit.SECONDS).rows()).singleElement()
                .satisfies(r -> assertThat(r.values()).contains(new ColumnValue("bal", "numeric", "5.00")));
        assertThat(q1.future().get(10, TimeUnit.SECONDS).rows()).hasSize(1);
        exec(ca, "ROLLBACK PREPARED " + lit(q2.gid()));
        Thread.sleep(200);
        assertThat(ordinary).isNotDone();
        ordinary.cancel(true);
    }

    @Test
    void keylessUpdatesAndDeletesAreRefused() throws Exception {
        exec(ca, "INSERT INTO nopk VALUES (1, 'a')", "INSERT INTO nothing VALUES (1, 'a')");
        Prepared upd = prepare(ca, "INSERT INTO acct VALUES (3000, 1)", "UPDATE nopk SET y = 'b'");
        Prepared del = prepare(ca, "DELETE FROM nothing");
        Prepared ins = prepare(ca, "INSERT INTO nopk VALUES (2, 'insert only travels')");
        try {
            assertThatThrownBy(() -> upd.future().get(10, TimeUnit.SECONDS)).cause().isInstanceOf(WriteSetRefusedException.class)
                    .hasMessageContaining("nopk").extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("55000");
            assertThatThrownBy(() -> del.future().get(10, TimeUnit.SECONDS)).cause().isInstanceOf(WriteSetRefusedException.class)
                    .hasMessageContaining("nothing").extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("55000");
            assertThat(ins.future().get(10, TimeUnit.SECONDS).rows()).singleElement()
                    .satisfies(r -> assertThat(r.key()).isEmpty());
        } finally {
            for (Prepared p : List.of(upd, del, ins)) exec(ca, "ROLLBACK PREPARED " + lit(p.gid()));
        }
    }

    @Test
    void aPrepareDecodedBeforeAnyoneExpectsItIsKept() throws Exception {
        long before = cap.handedOver.get();
        exec(ca, "BEGIN", "INSERT INTO acct VALUES (4000, 1)", "PREPARE TRANSACTION 'early one'");
        assertThat(waitFor(() -> cap.handedOver.get() > before)).isTrue();
        WriteSet ws = cap.expect("early one").get(1, TimeUnit.SECONDS);
        assertThat(ws.tag()).isEqualTo("early one");
        applier.apply(ws);
        exec(ca, "COMMIT PREPARED 'early one'");
        // a waiter that gives up does not leak, nor take the next one's write set
        CompletableFuture<WriteSet> impatient = cap.expect("late");
        assertThatThrownBy(() -> impatient.orTimeout(50, TimeUnit.MILLISECONDS).join()).hasCauseInstanceOf(TimeoutException.class);
        ship("DELETE FROM acct WHERE id = 4000");
        assertSameContents();
    }

    @Test
    void tooBigTransactionsAreRefusedAndOrdinaryOnesDoNotHoldMemory() throws Exception {
        PreparedCapture.createSlot(ca, "pc_small");
        try (PreparedCapture small = PreparedCapture.start(PreparedCapture.config(a.jdbcUrl("postgres"), "postgres", "pc_small")
                .maxTransactionBytes(20_000))) {
            exec(ca, "INSERT INTO nopk SELECT g, repeat('x', 100) FROM generate_series(1, 1000) g");   // ordinary and big: discarded
            exec(ca, "BEGIN", "INSERT INTO nopk SELECT g, repeat('y', 100) FROM generate_series(1, 1000) g", "PREPARE TRANSACTION 'big'");
            exec(ca, "BEGIN", "INSERT INTO nopk VALUES (-1, 'small')", "PREPARE TRANSACTION 'small'");
            try {
                assertThatThrownBy(() -> small.expect("big").get(10, TimeUnit.SECONDS)).cause().isInstanceOf(WriteSetRefusedException.class)
                        .extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("54000");
                assertThat(small.expect("small").get(10, TimeUnit.SECONDS).rows()).hasSize(1);
            } finally {
                exec(ca, "ROLLBACK PREPARED 'big'", "ROLLBACK PREPARED 'small'", "DELETE FROM nopk");
            }
        } finally {
            assertThat(PreparedCapture.dropSlot(ca, "pc_small")).isTrue();
            assertThat(PreparedCapture.dropSlot(ca, "pc_small")).isFalse();
        }
    }

    @Test
    void aReconnectNeitherLosesNorDuplicatesAHandOver() throws Exception {
        PreparedCapture.createSlot(ca, "pc_re");
        // status updates rarely: the hand-overs below are not confirmed when the walsender dies, so the server resends them
        try (PreparedCapture re = PreparedCapture.start(PreparedCapture.config(a.jdbcUrl("postgres"), "postgres", "pc_re")
                .statusInterval(Duration.ofSeconds(60)).reconnectDelay(Duration.ofMillis(50)))) {
            CompletableFuture<WriteSet> r1 = re.expect("r1");
            exec(ca, "BEGIN", "INSERT INTO acct VALUES (5001, 1)", "PREPARE TRANSACTION 'r1'");
            assertThat(r1.get(10, TimeUnit.SECONDS).rows()).hasSize(1);
            exec(ca, "COMMIT PREPARED 'r1'");
            exec(ca, "BEGIN", "INSERT INTO acct VALUES (5002, 1)", "PREPARE TRANSACTION 'r2'");   // possibly decoded before the kill
            assertThat(waitFor(() -> re.handedOver.get() == 2)).isTrue();
            terminateWalsender("pc_re");
            exec(ca, "BEGIN", "INSERT INTO acct VALUES (5003, 1)", "PREPARE TRANSACTION 'r3'");   // while reconnecting
            assertThat(waitFor(() -> re.reconnects.get() >= 1 && re.isConnected())).isTrue();
            assertThat(re.expect("r2").get(10, TimeUnit.SECONDS).rows()).hasSize(1);
            assertThat(re.expect("r3").get(10, TimeUnit.SECONDS).rows()).hasSize(1);
            assertThat(waitFor(() -> re.duplicates.get() >= 2)).as("r1 and r2 resent and dropped").isTrue();
            CompletableFuture<WriteSet> again = re.expect("r1");
            Thread.sleep(300);
            assertThat(again).as("r1 handed over once only").isNotDone();
            again.cancel(true);
            // a gid reused after COMMIT PREPARED is a new transaction: handed over again
            CompletableFuture<WriteSet> reused = re.expect("r1");
            exec(ca, "BEGIN", "INSERT INTO acct VALUES (5004, 1)", "PREPARE TRANSACTION 'r1'");
            assertThat(reused.get(10, TimeUnit.SECONDS).rows()).singleElement()
                    .satisfies(r -> assertThat(r.values()).contains(new ColumnValue("id", "integer", "5004")));
            exec(ca, "ROLLBACK PREPARED 'r1'", "ROLLBACK PREPARED 'r2'", "ROLLBACK PREPARED 'r3'", "DELETE FROM acct WHERE id > 5000");
        } finally {
            PreparedCapture.dropSlot(ca, "pc_re");
        }
    }

    void terminateWalsender(String slot) throws Exception {
        assertThat(waitFor(() -> {
            try (Statement st = ca.createStatement(); ResultSet rs = st.executeQuery(
                    "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '" + slot + "' AND active_pid IS NOT NULL")) {
                return rs.next() && rs.getBoolean(1);
            } catch (SQLException e) {
                return false;
            }
        })).isTrue();
    }

    List<TestDecodingParser.Event> peek() throws Exception {
        List<TestDecodingParser.Event> events = new ArrayList<>();
        try (Statement st = ca.createStatement(); ResultSet rs = st.executeQuery("SELECT data FROM pg_logical_slot_get_changes('pc_peek', NULL, NULL,"
                + " 'include-xids', '0', 'include-timestamp', '0', 'skip-empty-xacts', '0')")) {
            while (rs.next()) events.add(TestDecodingParser.parse(rs.getString(1)));
        }
        return events;
    }

    /** The capture's own view of a few lines, checked against what this server's test_decoding prints. */
    @Test
    void theServerPrintsWhatTheParserExpects() throws Exception {
        exec(ca, "SELECT pg_create_logical_replication_slot('pc_peek', 'test_decoding', false, true)");
        try {
            exec(ca, "BEGIN", "INSERT INTO types(id, bi, vb, bo, e, \"Odd]: col\") VALUES (99, B'1010', B'1', true, 'it''s', E'a\\nb\\\\c')",
                    "PREPARE TRANSACTION E'peek\\\\''x'");
            // decoded while prepared (a prepare rolled back before decoding reaches it comes without its rows)
            List<TestDecodingParser.Event> events = peek();
            exec(ca, "ROLLBACK PREPARED E'peek\\\\''x'");
            events.addAll(peek());
            assertThat(events).hasSize(4);
            assertThat(events.get(0)).isInstanceOf(TestDecodingParser.Begin.class);
            TestDecodingParser.Change c = (TestDecodingParser.Change) events.get(1);
            assertThat(c.newTuple()).contains(TestDecodingParser.Column.of("bi", "bit", "1010"), TestDecodingParser.Column.of("vb", "bit varying", "1"),
                    TestDecodingParser.Column.of("bo", "boolean", "true"), TestDecodingParser.Column.of("e", "\"My Schema\".\"odd ]: \"\"type\"\"\"", "it's"),
                    TestDecodingParser.Column.of("Odd]: col", "text", "a\nb\\c"), TestDecodingParser.Column.of("c", "character", null));
            assertThat(events.get(2)).isEqualTo(new TestDecodingParser.Prepare("peek\\'x"));
            assertThat(events.get(3)).isEqualTo(new TestDecodingParser.RollbackPrepared("peek\\'x"));
        } finally {
            exec(ca, "SELECT pg_drop_replication_slot('pc_peek')");
        }
    }
}
