package org.wanrep.frontend;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.wanrep.gcs.wan.LatencyMatrix;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Write-set execution (primary-copy, local-copy) through the proxies of three real sites on the
 * emulated na4 WAN: what symmetric execution cannot replicate (non-deterministic SQL, sequences)
 * must end identical everywhere; a client at a site that did not execute its transaction gets the
 * executing site's answers; what a write set cannot carry is refused; and the executing site's
 * crash leaves the survivors identical, with every acknowledged commit.
 */
class WriteSetReplicationTest {
    static List<String> sites() { return LatencyMatrix.load("na4").first(3).sites(); }

    /** Every table's primary is the last site, so clients at the first two submit remote writes. */
    static Map<String, String> primaryCopyAtLast() {
        String last = sites().get(2);
        return Map.of("execution", "primary-copy", "delivery", "safe",
                "tables.public.t.primary", last, "tables.public.kinds.primary", last, "tables.public.acc.primary", last,
                "tables.public.t_id_seq.primary", last, "tables.public.kinds_id_seq.primary", last);
    }

    @ParameterizedTest
    @ValueSource(strings = {"local-copy", "primary-copy"})
    void nonDeterministicSqlAndSequencesReplicateIdentically(String execution) throws Exception {
        Map<String, String> cfg = execution.equals("primary-copy") ? primaryCopyAtLast() : Map.of("execution", execution, "delivery", "agreed");
        try (TestCluster c = new TestCluster(sites(), "na4", cfg)) {
            try (Connection conn = c.connect(0); Statement st = conn.createStatement()) {
                st.execute("CREATE TABLE t(id serial PRIMARY KEY, u uuid, at timestamptz, r float8, born timestamptz DEFAULT clock_timestamp(), origin text)");
            }
            c.awaitQuiescent();
            List<Thread> ts = new ArrayList<>();
            List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
            List<Integer> ids = new java.util.concurrent.CopyOnWriteArrayList<>();
            for (int s = 0; s < 3; s++) {
                int site = s;
                ts.add(Thread.ofPlatform().start(() -> {
                    try (Connection conn = c.connect(site);
                         PreparedStatement ps = conn.prepareStatement("INSERT INTO t(u, at, r, origin) VALUES (gen_random_uuid(), clock_timestamp(), random(), ?) RETURNING id")) {
                        for (int k = 0; k < 8; k++) {   // beyond pgjdbc's prepareThreshold: named statements
                            ps.setString(1, "site" + site);
                            try (ResultSet rs = ps.executeQuery()) {
                                rs.next();
                                ids.add(rs.getInt(1));
                            }
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            for (Thread t : ts) t.join();
            assertThat(failures).isEmpty();
            assertThat(c.check()).allSatisfy((t, v) -> assertThat(v).as(t).isEqualTo("same"));
            // the ids the clients were told are the ids every replica holds
            assertThat(ids).doesNotHaveDuplicates().hasSize(24);
            for (int i = 0; i < 3; i++)
                try (Connection conn = c.pgs.get(i).connect(); Statement st = conn.createStatement();
                     ResultSet rs = st.executeQuery("SELECT count(*), count(DISTINCT u), max(id) FROM t")) {
                    rs.next();
                    assertThat(rs.getInt(1)).isEqualTo(24);
                    assertThat(rs.getInt(2)).isEqualTo(24);
                }
            // the sequence goes on from the same value at every site, whoever executes next
            try (Connection conn = c.connect(1); Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("INSERT INTO t(origin) VALUES ('next') RETURNING id")) {
                rs.next();
                assertThat(rs.getInt(1)).isGreaterThan(ids.stream().mapToInt(Integer::intValue).max().orElseThrow());
            }
            assertThat(c.check()).allSatisfy((t, v) -> assertThat(v).as(t).isEqualTo("same"));
        }
    }

    /**
     * A sequence advanced inside a function body travels with the write set: the function's table
     * set, derived from its body, names the sequence, so the executing site ships its value and the
     * next call at another site takes the next id (no 23505), every replica ending with one last_value.
     */
    @Test
    void sequenceAdvancedInAFunctionBodyTravelsWithTheWriteSet() throws Exception {
        try (TestCluster c = new TestCluster(sites(), "na4", Map.of("execution", "local-copy", "delivery", "agreed"))) {
            try (Connection conn = c.connect(0); Statement st = conn.createStatement()) {
                st.execute("CREATE SEQUENCE scid");
                st.execute("CREATE TABLE cart(id bigint PRIMARY KEY, note text)");
                st.execute("""
                        CREATE FUNCTION add_cart(p_note text) RETURNS bigint LANGUAGE plpgsql AS $$
                        DECLARE v bigint;
                        BEGIN
                            INSERT INTO cart VALUES (nextval('scid'), p_note) RETURNING id INTO v;
                            RETURN v;
                        END $$""");
                st.execute("""
                        CREATE FUNCTION add_cart2(p_note text) RETURNS bigint LANGUAGE sql AS
                        $$ INSERT INTO cart VALUES (nextval('public.scid'::regclass), p_note) RETURNING id $$""");
            }
            c.awaitQuiescent();
            List<Long> ids = new ArrayList<>();
            String[] calls = {"SELECT add_cart('a')", "SELECT add_cart('b')", "SELECT add_cart2('c')", "SELECT add_cart('a2')", "SELECT add_cart2('b2')"};
            for (int k = 0; k < calls.length; k++) {
                try (Connection conn = c.connect(k % 2); Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(calls[k])) {
                    rs.next();
                    ids.add(rs.getLong(1));
                }
            }
            assertThat(ids).containsExactly(1L, 2L, 3L, 4L, 5L);
            Map<String, String> verdict = c.check();
            assertThat(verdict).containsKey("sequence public.scid").containsKey("function public.add_cart(p_note text)");
            assertThat(verdict).allSatisfy((t, v) -> assertThat(v).as(t).isEqualTo("same"));
            for (int i = 0; i < 3; i++)
                try (Connection conn = c.pgs.get(i).connect(); Statement st = conn.createStatement();
                     ResultSet rs = st.executeQuery("SELECT last_value, (SELECT count(*) FROM cart) FROM scid")) {
                    rs.next();
                    assertThat(rs.getLong(1)).as("last_value at %s", sites().get(i)).isEqualTo(5);
                    assertThat(rs.getLong(2)).isEqualTo(5);
                }
            // an identity column's sequence travels too (it has no default expression naming it): each site executes
            // its own insert under local-copy, and without the value shipped the second site took id 1 again (23505)
            try (Connection conn = c.connect(0); Statement st = conn.createStatement()) {
                st.execute("CREATE TABLE ident(id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, note text)");
            }
            c.awaitQuiescent();
            List<Integer> identIds = new ArrayList<>();
            for (int k = 0; k < 3; k++)
                try (Connection conn = c.connect(k); Statement st = conn.createStatement();
                     ResultSet rs = st.executeQuery("INSERT INTO ident(note) VALUES ('site" + k + "') RETURNING id")) {
                    rs.next();
                    identIds.add(rs.getInt(1));
                }
            assertThat(identIds).containsExactly(1, 2, 3);
            // applied elsewhere with the executor's ids (OVERRIDING SYSTEM VALUE), and an update leaves the key alone
            try (Connection conn = c.connect(2); Statement st = conn.createStatement()) {
                assertThat(st.executeUpdate("UPDATE ident SET note = note || '!' WHERE id <= 2")).isEqualTo(2);
            }
            assertThat(c.check()).allSatisfy((t, v) -> assertThat(v).as(t).isEqualTo("same"));
        }
    }

    /** Every common type survives capture, shipping and apply, and an executing site's refusal reaches a remote client. */
    @Test
    void typesRefusalsAndRemoteAnswersUnderPrimaryCopy() throws Exception {
        try (TestCluster c = new TestCluster(sites(), "na4", primaryCopyAtLast())) {
            try (Connection conn = c.connect(0); Statement st = conn.createStatement()) {
                st.execute("CREATE TABLE kinds(id serial PRIMARY KEY, n numeric(30,10), txt text, b bytea, j json, jb jsonb, arr int[], tarr text[],"
                        + " ts timestamptz, d date, iv interval, flag boolean, big text, nul text, CONSTRAINT pos CHECK (n IS NULL OR n > -1e19))");
                st.execute("CREATE TABLE nokey(a int)");
                st.execute("CREATE TABLE acc(id int PRIMARY KEY, v int NOT NULL)");
                st.execute("INSERT INTO acc SELECT g, 0 FROM generate_series(1, 5) g");
            }
            c.awaitQuiescent();
            try (Connection conn = c.connect(0)) {   // site 0 is not the primary: remote writes
                try (PreparedStatement ps = conn.prepareStatement("INSERT INTO kinds(n, txt, b, j, jb, arr, tarr, ts, d, iv, flag, big, nul)"
                        + " VALUES (?::numeric, ?, ?, ?::json, ?::jsonb, ?::int[], ?::text[], ?::timestamptz, ?::date, ?::interval, ?, ?, NULL)")) {
                    ps.setString(1, "1234567890123456789.0123456789");
                    ps.setString(2, "it's \"quoted\" \\ ünïcödé 新 🎉");
                    ps.setBytes(3, new byte[]{0, 1, 2, (byte) 0xff, '\\', '\''});
                    ps.setString(4, "{\"a\": [1, 2.50, null], \"b\": \"x\"}");
                    ps.setString(5, "{\"k\": {\"deep\": true}}");
                    ps.setString(6, "{1,2,NULL,4}");
                    ps.setString(7, "{\"a,b\",\"c\\\"d\",NULL}");
                    ps.setString(8, "2026-11-23 12:34:56.789012+05:30");
                    ps.setString(9, "2026-02-28");
                    ps.setString(10, "1 day 02:03:04.5");
                    ps.setBoolean(11, true);
                    ps.setString(12, "toasted ".repeat(40_000));   // large enough to be TOASTed
                    assertThat(ps.executeUpdate()).isEqualTo(1);  // the count comes from the primary
                }
                try (Statement st = conn.createStatement()) {
                    // an update that leaves the TOASTed column unchanged must not blank it elsewhere
                    assertThat(st.executeUpdate("UPDATE kinds SET flag = false, n = n * 2")).isEqualTo(1);
                    // the primary's refusals reach the client at the other site, nothing changes anywhere
                    assertThatThrownBy(() -> st.executeUpdate("UPDATE kinds SET n = -5e19"))
                            .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("23514"));
                    // a keyless table takes inserts (a history or log), not updates or deletes, which the decoder drops
                    assertThat(st.executeUpdate("INSERT INTO nokey VALUES (1), (2)")).isEqualTo(2);
                    assertThatThrownBy(() -> st.executeUpdate("UPDATE nokey SET a = a + 1"))
                            .isInstanceOfSatisfying(SQLException.class, e -> {
                                assertThat(e.getSQLState()).isEqualTo("55000");
                                assertThat(e.getMessage()).contains("nokey");
                            });
                    assertThatThrownBy(() -> st.executeUpdate("DELETE FROM nokey"))
                            .isInstanceOfSatisfying(SQLException.class, e -> {
                                assertThat(e.getSQLState()).isEqualTo("55000");
                                assertThat(e.getMessage()).contains("nokey");
                            });
                    // a multi-statement request with rows and counts, answered as if executed here
                    assertThat(st.execute("UPDATE acc SET v = v + 1 WHERE id <= 3; SELECT v FROM acc WHERE id = 1")).isFalse();
                    assertThat(st.getUpdateCount()).isEqualTo(3);
                    assertThat(st.getMoreResults()).isTrue();
                    try (ResultSet rs = st.getResultSet()) {
                        rs.next();
                        assertThat(rs.getInt(1)).isEqualTo(1);
                    }
                }
                // an interactive block ships its write set too
                conn.setAutoCommit(false);
                try (Statement st = conn.createStatement()) {
                    st.executeUpdate("UPDATE acc SET v = v + 10 WHERE id = 4");
                    st.executeUpdate("INSERT INTO kinds(txt, ts) VALUES ('from a block', clock_timestamp())");
                }
                conn.commit();
                conn.setAutoCommit(true);
            }
            assertThat(c.check()).allSatisfy((t, v) -> assertThat(v).as(t).isEqualTo("same"));
            for (int i = 0; i < 3; i++)
                try (Connection conn = c.pgs.get(i).connect(); Statement st = conn.createStatement()) {
                    try (ResultSet rs = st.executeQuery("SELECT length(big), n, flag FROM kinds WHERE big IS NOT NULL")) {
                        rs.next();
                        assertThat(rs.getInt(1)).isEqualTo("toasted ".length() * 40_000);
                        assertThat(rs.getBigDecimal(2)).isEqualByComparingTo("2469135780246913578.0246913578");
                        assertThat(rs.getBoolean(3)).isFalse();
                    }
                    try (ResultSet rs = st.executeQuery("SELECT count(*), sum(a) FROM nokey")) {   // the inserts, unchanged
                        rs.next();
                        assertThat(rs.getInt(1)).isEqualTo(2);
                        assertThat(rs.getInt(2)).isEqualTo(3);
                    }
                    try (ResultSet rs = st.executeQuery("SELECT sum(v) FROM acc")) {
                        rs.next();
                        assertThat(rs.getInt(1)).isEqualTo(13);
                    }
                }
        }
    }

    /**
     * The executing site (every table's primary, and the sequencer's site) crashes mid-load under safe
     * delivery: the survivors re-execute what it had not shipped, end identical, and keep every
     * increment a client was told committed.
     */
    @Test
    void executingSiteCrashMidLoadLosesNoAcknowledgedCommit() throws Exception {
        long seed = Long.getLong("wanrep.wan.seed", new Random().nextLong());
        System.out.println("write-set executor crash: seed " + seed);
        String first = sites().get(0);
        try (TestCluster c = new TestCluster(sites(), "na4", Map.of("execution", "primary-copy", "delivery", "safe",
                "tables.public.ctr.primary", first))) {
            try (Connection conn = c.connect(1); Statement st = conn.createStatement()) {
                st.execute("CREATE TABLE ctr(id int PRIMARY KEY, n int NOT NULL, last uuid)");
                st.execute("INSERT INTO ctr SELECT g, 0, NULL FROM generate_series(1, 3) g");
            }
            c.awaitQuiescent();
            AtomicLong acked = new AtomicLong();
            AtomicBoolean crashed = new AtomicBoolean();
            List<Thread> ts = new ArrayList<>();
            for (int s = 1; s < 3; s++)   // clients at the survivors: every write is remote, executed by the first site
                for (int k = 0; k < 2; k++) {
                    int site = s;
                    Random r = new Random(seed * 31 + s * 7 + k);
                    ts.add(Thread.ofPlatform().start(() -> {
                        try (Connection conn = c.connect(site); Statement st = conn.createStatement()) {
                            for (int i = 0; i < 40; i++) {
                                try {
                                    st.executeUpdate("UPDATE ctr SET n = n + 1, last = gen_random_uuid() WHERE id = " + (1 + r.nextInt(3)));
                                    acked.incrementAndGet();
                                } catch (SQLException e) {
                                    if (!crashed.get()) throw e;
                                }
                            }
                        } catch (SQLException e) {
                            throw new AssertionError(e);
                        }
                    }));
                }
            Thread.sleep(600 + new Random(seed).nextInt(600));
            crashed.set(true);
            c.crash(0);
            for (Thread t : ts) t.join();
            assertThat(c.check(List.of(1, 2))).allSatisfy((t, v) -> assertThat(v).as(t).isEqualTo("same"));
            try (Connection conn = c.pgs.get(1).connect(); Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SELECT sum(n) FROM ctr")) {
                rs.next();
                assertThat(rs.getLong(1)).as("every acknowledged increment survived").isGreaterThanOrEqualTo(acked.get());
            }
            // the survivors go on: the first configured survivor executes now
            try (Connection conn = c.connect(2); Statement st = conn.createStatement()) {
                assertThat(st.executeUpdate("UPDATE ctr SET n = n + 1 WHERE id = 1")).isEqualTo(1);
            }
            assertThat(c.check(List.of(1, 2))).allSatisfy((t, v) -> assertThat(v).as(t).isEqualTo("same"));
        }
    }
}
