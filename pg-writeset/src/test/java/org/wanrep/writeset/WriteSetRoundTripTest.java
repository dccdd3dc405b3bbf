package org.wanrep.writeset;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.pg.TableDigest;
import org.wanrep.writeset.apply.WriteSetApplier;
import org.wanrep.writeset.apply.WriteSetDivergenceException;
import org.wanrep.writeset.capture.WriteSetCapture;
import org.wanrep.writeset.codec.WriteSetCodec;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Capture on replica A, ship through the codec, apply on replica B, compare with TableDigest.
 * Both replicas are real PostgreSQL servers; B also runs a capture to show applied changes are not
 * captured again.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WriteSetRoundTripTest {
    static final String SCHEMA = """
            CREATE TABLE types(id int PRIMARY KEY, i int, b bigint, n numeric, n30 numeric(40,10), f float8, re real,
              tx text, by bytea, j json, jb jsonb, ia int[], ta text[], ts timestamptz, d date, bo boolean,
              big text, c char(3), vc varchar(10), u uuid, iv interval, nn numeric NOT NULL DEFAULT 0);
            ALTER TABLE types ALTER big SET STORAGE EXTERNAL;
            CREATE TABLE acct(id int PRIMARY KEY, owner text NOT NULL, bal numeric(12,2) NOT NULL, UNIQUE (owner));
            CREATE TABLE audit(id bigserial PRIMARY KEY, acct int REFERENCES acct(id) ON UPDATE CASCADE, what text);
            CREATE TABLE nopk(a int, b text);
            CREATE TABLE fullid(a int, b text, c jsonb);
            ALTER TABLE fullid REPLICA IDENTITY FULL;
            CREATE TABLE gen(id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, a int, twice int GENERATED ALWAYS AS (a * 2) STORED);
            CREATE SCHEMA other;
            CREATE TYPE other.mood AS ENUM ('sad', 'ok', 'happy');
            CREATE DOMAIN other.pos AS int CHECK (VALUE > 0);
            CREATE TYPE other.pair AS (x int, y text);
            CREATE TABLE other.kinds(id int PRIMARY KEY, m other.mood, p other.pos, c other.pair, r int4range, ma other.mood[]);
            CREATE TABLE parts(id int, region text, v int, PRIMARY KEY (id, region)) PARTITION BY LIST (region);
            CREATE TABLE parts_eu PARTITION OF parts FOR VALUES IN ('eu');
            CREATE TABLE parts_us PARTITION OF parts FOR VALUES IN ('us');
            """;
    static final List<String> REPLICATED = List.of("public.types", "public.acct", "public.audit", "public.fullid", "public.gen", "other.kinds", "public.parts_eu", "public.parts_us");

    LocalPostgres a, b;
    Connection ca, cb, applyConn;
    WriteSetCapture capA, capB;
    WriteSetApplier applier;
    final List<WriteSet> untaggedAtB = new CopyOnWriteArrayList<>();
    final AtomicInteger tags = new AtomicInteger();

    @BeforeAll
    void start() throws Exception {
        a = LocalPostgres.startTemporary();
        b = LocalPostgres.startTemporary();
        ca = a.connect();
        cb = b.connect();
        for (Connection c : List.of(ca, cb)) try (Statement st = c.createStatement()) { st.execute(SCHEMA); }
        assertThat(WriteSetCapture.createSlot(ca, "ws_a")).isTrue();
        assertThat(WriteSetCapture.createSlot(ca, "ws_a")).isFalse();
        WriteSetCapture.createSlot(cb, "ws_b");
        capA = WriteSetCapture.start(WriteSetCapture.config(a.jdbcUrl("postgres"), "postgres", "ws_a"));
        capB = WriteSetCapture.start(WriteSetCapture.config(b.jdbcUrl("postgres"), "postgres", "ws_b").untaggedListener(untaggedAtB::add));
        applyConn = b.connect();
        applier = new WriteSetApplier(applyConn, "wanrep_site_a");
    }

    @AfterAll
    void stop() throws Exception {
        if (capA != null) capA.close();
        if (capB != null) capB.close();
        if (applier != null) applier.close();
        for (AutoCloseable c : new AutoCloseable[]{applyConn, ca, cb, a, b}) if (c != null) c.close();
    }

    /** Runs statements in one transaction on A, tagged as the middleware does; returns the captured write set's future. */
    CompletableFuture<WriteSet> runTagged(String... sql) throws SQLException {
        String tag = "t" + tags.incrementAndGet();
        CompletableFuture<WriteSet> f = capA.expect(tag);
        ca.setAutoCommit(false);
        try (Statement st = ca.createStatement()) {
            for (String s : sql) st.execute(s);
            st.execute("SELECT pg_logical_emit_message(true, 'wanrep', '" + tag + "')");
            ca.commit();
        } catch (SQLException e) {
            ca.rollback();
            throw e;
        } finally {
            ca.setAutoCommit(true);
        }
        return f;
    }

    /** Capture on A, encode, decode, apply on B. */
    WriteSet ship(String... sql) throws Exception {
        WriteSet ws = runTagged(sql).get(10, TimeUnit.SECONDS);
        WriteSet received = WriteSetCodec.decode(WriteSetCodec.encode(ws));
        assertThat(received).isEqualTo(ws);
        applier.apply(received);
        return ws;
    }

    void assertSameContents() throws SQLException {
        Map<String, TableDigest.Digest> da = TableDigest.of(ca), db = TableDigest.of(cb);
        for (String t : REPLICATED) assertThat(db.get(t)).as(t).isEqualTo(da.get(t));
    }

    @Test
    void everyCommonTypeRoundTripsExactly() throws Exception {
        ship("""
                INSERT INTO types VALUES (1, -2147483648, 9223372036854775807, 123456789012345678901234567890.123456789012,
                  12345678901234567890123456789.0123456789, 0.1, 3.4028235e38, E'it''s "q" \\\\ ünï\\n新 🎉\\ttab',
                  '\\x00ff10deadbeef', '{"a": [1, 2.50, "x"], "b": null}', '{"k": 1.0, "z": [true]}',
                  '{1,NULL,3}', '{"a b","c,\\"d",NULL,""}', '2024-01-02 03:04:05.123456+02', '2024-02-29', true,
                  'small', 'ab', 'héllo', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '1 year 2 days 03:04:05.5', 1.50)""",
                "INSERT INTO types(id) VALUES (2)",   // NULLs everywhere but nn
                "INSERT INTO types(id, f, re, tx, by, bo, nn) VALUES (3, -0.0, 1e-45, '', '\\x', false, -1e-20)");
        assertSameContents();
        try (Statement st = cb.createStatement(); ResultSet rs = st.executeQuery("SELECT n::text, by, tx FROM types WHERE id = 1")) {
            rs.next();
            assertThat(rs.getString(1)).isEqualTo("123456789012345678901234567890.123456789012");
            assertThat(rs.getBytes(2)).containsExactly(0x00, 0xff, 0x10, 0xde, 0xad, 0xbe, 0xef);
            assertThat(rs.getString(3)).isEqualTo("it's \"q\" \\ ünï\n新 🎉\ttab");
        }
    }

    @Test
    void unchangedToastedValueStaysIntactAtTheTarget() throws Exception {
        // random hex does not compress, so 200 kB goes out of line (TOAST)
        ship("INSERT INTO types(id, big, i) SELECT 10, string_agg(md5(g::text || random()::text), '') , 0 FROM generate_series(1, 6250) g");
        WriteSet ws = ship("UPDATE types SET i = i + 1 WHERE id = 10");
        assertThat(ws.rows()).singleElement().satisfies(r ->
                assertThat(r.values()).extracting(ColumnValue::name).doesNotContain("big").contains("i"));
        assertSameContents();
        try (Statement st = cb.createStatement(); ResultSet rs = st.executeQuery("SELECT length(big), i FROM types WHERE id = 10")) {
            rs.next();
            assertThat(rs.getInt(1)).isEqualTo(200_000);
            assertThat(rs.getInt(2)).isEqualTo(1);
        }
    }

    @Test
    void multiRowTransactionsDeletesAndPrimaryKeyUpdates() throws Exception {
        ship("INSERT INTO acct SELECT g, 'owner' || g, g * 10 FROM generate_series(1, 200) g",
                "INSERT INTO audit(acct, what) SELECT g, 'opened' FROM generate_series(1, 200) g");
        ship("UPDATE acct SET bal = bal * 1.05 WHERE id % 3 = 0",
                "DELETE FROM audit WHERE acct > 150",
                "DELETE FROM acct WHERE id > 150",
                "UPDATE acct SET id = id + 1000 WHERE id BETWEEN 10 AND 20",   // primary key changes
                "UPDATE acct SET owner = 'swap' WHERE id = 1", "UPDATE acct SET owner = 'owner1' WHERE id = 2",
                "UPDATE acct SET owner = 'owner2' WHERE id = 1",                // unique constraint: order matters
                "INSERT INTO acct VALUES (10, 'reused-key', 0)");
        assertSameContents();
        try (Statement st = cb.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*), sum(bal) FROM acct")) {
            rs.next();
            assertThat(rs.getInt(1)).isEqualTo(151);
        }
    }

    /** Identity (GENERATED ALWAYS) and generated columns refuse explicit values: the executor's rows still apply. */
    @Test
    void identityAndGeneratedColumns() throws Exception {
        ship("INSERT INTO gen(a) VALUES (1), (2), (3)");
        ship("UPDATE gen SET a = a + 10 WHERE id >= 2", "DELETE FROM gen WHERE id = 1");
        assertSameContents();
        try (Statement st = cb.createStatement(); ResultSet rs = st.executeQuery("SELECT string_agg(id || ':' || a || ':' || twice, ',' ORDER BY id) FROM gen")) {
            rs.next();
            assertThat(rs.getString(1)).isEqualTo("2:12:24,3:13:26");
        }
    }

    /** Types of other schemas (enum, domain, composite, range, arrays of them) and rows routed to partitions. */
    @Test
    void userTypesAndPartitions() throws Exception {
        ship("INSERT INTO other.kinds VALUES (1, 'happy', 5, ROW(1, 'a b'), '[1,5)', '{sad,ok}'), (2, NULL, NULL, NULL, 'empty', NULL)",
                "INSERT INTO parts VALUES (1, 'eu', 1), (2, 'us', 2)");
        ship("UPDATE other.kinds SET m = 'ok', c = ROW(2, 'x''y') WHERE id = 1", "UPDATE parts SET v = v + 10", "DELETE FROM parts WHERE id = 2");
        ship("UPDATE parts SET region = 'us' WHERE id = 1");   // moves the row to the other partition
        assertSameContents();
    }

    @Test
    void fullReplicaIdentityTableWithNullsAndDuplicates() throws Exception {
        ship("INSERT INTO fullid VALUES (1, NULL, '{\"x\": 1}'), (2, 'b', NULL), (3, 'c', '[]')");
        ship("UPDATE fullid SET b = 'was null' WHERE a = 1", "DELETE FROM fullid WHERE a = 2");
        assertSameContents();
    }

    @Test
    void keylessTablesAreRefusedBeforeAndAtCapture() throws Exception {
        assertThat(KeyCheck.identities(ca, List.of("types", "public.fullid", "nopk")))
                .containsEntry("types", KeyCheck.Identity.PRIMARY_KEY)
                .containsEntry("public.fullid", KeyCheck.Identity.FULL)
                .containsEntry("nopk", KeyCheck.Identity.NONE);
        assertThatThrownBy(() -> KeyCheck.requireIdentity(ca, List.of("acct", "nopk")))
                .isInstanceOf(WriteSetRefusedException.class).hasMessageContaining("nopk")
                .extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("55000");
        assertThatThrownBy(() -> KeyCheck.identities(ca, List.of("missing"))).extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("42P01");
        // an INSERT needs no key to apply: it travels (an insert-only history or log table)
        ship("INSERT INTO nopk VALUES (1, 'x')", "INSERT INTO acct VALUES (5000, 'k', 1)");
        try (Statement st = cb.createStatement(); ResultSet rs = st.executeQuery("SELECT b FROM nopk")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("x");
        }
        // an UPDATE of a keyless table never reaches the capture (wal2json drops it): only KeyCheck can refuse it
        WriteSet ws = runTagged("UPDATE nopk SET b = 'y'").get(10, TimeUnit.SECONDS);
        assertThat(ws.rows()).isEmpty();
        ship("DELETE FROM acct WHERE id = 5000");
    }

    @Test
    void truncateAndNaNInNotNullNumericAreRefused() throws Exception {
        CompletableFuture<WriteSet> t = runTagged("CREATE TABLE IF NOT EXISTS scratch(id int PRIMARY KEY)", "TRUNCATE scratch");
        assertThatThrownBy(() -> t.get(10, TimeUnit.SECONDS)).cause().hasMessageContaining("TRUNCATE")
                .extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("0A000");
        CompletableFuture<WriteSet> nan = runTagged("INSERT INTO types(id, nn) VALUES (99, 'NaN')");
        assertThatThrownBy(() -> nan.get(10, TimeUnit.SECONDS)).cause().hasMessageContaining("NaN")
                .extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("0A000");
        try (Statement st = ca.createStatement()) { st.execute("DELETE FROM types WHERE id = 99; DROP TABLE scratch"); }
    }

    @Test
    void appliedChangesAreNotCapturedAgainAtTheTarget() throws Exception {
        long skippedBefore = capB.stats().skippedOrigin();
        ship("INSERT INTO acct VALUES (7000, 'origin-test', 1)");
        ship("DELETE FROM acct WHERE id = 7000");
        waitFor(() -> capB.stats().skippedOrigin() >= skippedBefore + 2);
        // a local, untagged change at B is seen: the capture works, it just skips applied ones
        try (Statement st = cb.createStatement()) { st.execute("INSERT INTO acct VALUES (7001, 'local-at-b', 1)"); }
        waitFor(() -> untaggedAtB.stream().anyMatch(w -> w.toString().contains("local-at-b")));
        assertThat(untaggedAtB).noneMatch(w -> w.toString().contains("origin-test"));
        try (Statement st = cb.createStatement()) { st.execute("DELETE FROM acct WHERE id = 7001"); }
    }

    @Test
    void writeSetArrivingBeforeAnyoneExpectsItIsKept() throws Exception {
        try (Statement st = ca.createStatement()) {
            st.execute("BEGIN; INSERT INTO acct VALUES (6000, 'early', 1); SELECT pg_logical_emit_message(true, 'wanrep', 'early-1'); COMMIT");
        }
        waitFor(() -> capA.stats().handedOver() > 0 && capA.stats().transactions() >= 1);
        Thread.sleep(200);
        WriteSet ws = capA.expect("early-1").get(10, TimeUnit.SECONDS);
        assertThat(ws.tag()).isEqualTo("early-1");
        applier.apply(ws);
        ship("DELETE FROM acct WHERE id = 6000");
        assertSameContents();
    }

    @Test
    void divergenceFailsLoudlyAndRollsBack() throws Exception {
        ship("INSERT INTO acct VALUES (8000, 'div', 1), (8001, 'div2', 2)");
        try (Statement st = cb.createStatement()) { st.execute("DELETE FROM acct WHERE id = 8001"); }   // B drifts
        WriteSet ws = runTagged("UPDATE acct SET bal = 5 WHERE id IN (8000, 8001)").get(10, TimeUnit.SECONDS);
        assertThatThrownBy(() -> applier.apply(ws)).isInstanceOf(WriteSetDivergenceException.class)
                .hasMessageContaining("public.acct").hasMessageContaining("8001");
        try (Statement st = cb.createStatement(); ResultSet rs = st.executeQuery("SELECT bal FROM acct WHERE id = 8000")) {
            rs.next();
            assertThat(rs.getBigDecimal(1)).isEqualByComparingTo("1");   // rolled back as a whole
        }
        try (Statement st = cb.createStatement()) { st.execute("INSERT INTO acct VALUES (8001, 'div2', 2)"); }
        applier.apply(ws);   // the applier is usable after a failure
        ship("DELETE FROM acct WHERE id >= 8000");
        assertSameContents();
    }

    @Test
    void reconnectResendsFromConfirmedPositionDuplicatesDroppedAndSizeLimit() throws Exception {
        WriteSetCapture.createSlot(ca, "ws_re");
        // long status interval: what was handed over is not yet confirmed when the connection dies
        try (WriteSetCapture cap = WriteSetCapture.start(WriteSetCapture.config(a.jdbcUrl("postgres"), "postgres", "ws_re")
                .statusInterval(Duration.ofSeconds(30)).reconnectDelay(Duration.ofMillis(100)).maxTransactionBytes(100_000))) {
            String tag1 = "re" + tags.incrementAndGet();
            CompletableFuture<WriteSet> f1 = cap.expect(tag1);
            try (Statement st = ca.createStatement()) {
                st.execute("BEGIN; INSERT INTO acct VALUES (9000, 're', 1); SELECT pg_logical_emit_message(true, 'wanrep', '" + tag1 + "'); COMMIT");
            }
            assertThat(f1.get(10, TimeUnit.SECONDS).rows()).hasSize(1);
            try (Statement st = ca.createStatement()) {
                st.execute("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = 'ws_re'");
            }
            String tag2 = "re" + tags.incrementAndGet();
            CompletableFuture<WriteSet> f2 = cap.expect(tag2);
            try (Statement st = ca.createStatement()) {
                st.execute("BEGIN; DELETE FROM acct WHERE id = 9000; SELECT pg_logical_emit_message(true, 'wanrep', '" + tag2 + "'); COMMIT");
            }
            assertThat(f2.get(20, TimeUnit.SECONDS).rows()).singleElement().extracting(RowChange::action).isEqualTo(RowChange.Action.DELETE);
            assertThat(cap.stats().reconnects()).isGreaterThanOrEqualTo(1);
            assertThat(cap.stats().duplicates()).isGreaterThanOrEqualTo(1);   // tag1 came again and was dropped

            String tag3 = "re" + tags.incrementAndGet();
            CompletableFuture<WriteSet> f3 = cap.expect(tag3);
            String tag4 = "re" + tags.incrementAndGet();
            CompletableFuture<WriteSet> f4 = cap.expect(tag4);
            try (Statement st = ca.createStatement()) {
                // one huge record, then many small ones: both beyond 100 kB
                st.execute("BEGIN; INSERT INTO types(id, tx) VALUES (9999, repeat('z', 200000)); SELECT pg_logical_emit_message(true, 'wanrep', '" + tag3 + "'); COMMIT");
                st.execute("BEGIN; INSERT INTO acct SELECT g, 'big' || g, g FROM generate_series(9100, 11000) g; SELECT pg_logical_emit_message(true, 'wanrep', '" + tag4 + "'); COMMIT");
                st.execute("DELETE FROM types WHERE id = 9999; DELETE FROM acct WHERE id >= 9100");
            }
            for (CompletableFuture<WriteSet> f : List.of(f3, f4))
                assertThatThrownBy(() -> f.get(10, TimeUnit.SECONDS)).cause().extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("54000");
        } finally {
            WriteSetCapture.dropSlot(ca, "ws_re");
        }
    }

    static void waitFor(BooleanSupplier cond) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end) throw new AssertionError("condition not met within 10 s");
            Thread.sleep(20);
        }
    }
}
