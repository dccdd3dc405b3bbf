package org.wanrep.txn;

import org.junit.jupiter.api.Test;
import org.wanrep.wire.Messages;
import org.wanrep.wire.WireMessage;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** What the other sites replay of a certified block: its reads left out, its plain statements joined, else its log as it ran. */
class ReplayLogTest {
    private static final WireMessage UPDATE = WireMessage.query("UPDATE pgbench_accounts SET abalance = abalance + 5 WHERE aid = 7;");
    private static final WireMessage SELECT = WireMessage.query("SELECT abalance FROM pgbench_accounts WHERE aid = 7;");
    private static final WireMessage INSERT = WireMessage.query("INSERT INTO h (x) VALUES ('a;b') -- trailing comment");

    private static List<WireMessage> logOf(WireMessage... ms) { return new ArrayList<>(List.of(ms)); }

    @Test
    void pgbenchsBlockTravelsAsOneQueryWithoutItsRead() {
        ReplayLog r = new ReplayLog();
        r.add(List.of(UPDATE), true, false, false, false);
        r.add(List.of(SELECT), true, true, false, false);
        r.add(List.of(INSERT), true, false, false, false);
        List<WireMessage> shipped = r.shipped(logOf(UPDATE, SELECT, INSERT));
        assertThat(shipped).hasSize(1);
        assertThat(shipped.get(0).kind()).isEqualTo('Q');
        // the comment ends at the new line: nothing after it is swallowed, the texts' bytes are kept
        assertThat(shipped.get(0).queryText()).isEqualTo(UPDATE.queryText() + "\n;\n" + INSERT.queryText());
        assertThat(r.readsLeftOut()).isEqualTo(1);
    }

    /** A read that draws from random()'s sequence stays in the joined log: the replay's later draws must be the origin's. */
    @Test
    void aReadThatDrawsRandomValuesIsNotLeftOut() {
        WireMessage draw = WireMessage.query("SELECT RANDOM()"), seed = WireMessage.query("select setseed(0.2)");
        ReplayLog r = new ReplayLog();
        r.add(List.of(draw), true, true, false, false);
        r.add(List.of(SELECT), true, true, false, false);
        r.add(List.of(seed), true, true, false, false);
        r.add(List.of(UPDATE), true, false, false, false);
        List<WireMessage> shipped = r.shipped(logOf(draw, SELECT, seed, UPDATE));
        assertThat(shipped).hasSize(1);
        assertThat(shipped.get(0).queryText()).isEqualTo(draw.queryText() + "\n;\n" + seed.queryText() + "\n;\n" + UPDATE.queryText());
        assertThat(r.readsLeftOut()).isEqualTo(1);
    }

    @Test
    void theTextsBytesAreKeptInTheirEncoding() {
        byte[] latin1 = "UPDATE t SET s = 'caf\u00e9' WHERE k = 1".getBytes(StandardCharsets.ISO_8859_1);
        byte[] payload = new byte[latin1.length + 1];
        System.arraycopy(latin1, 0, payload, 0, latin1.length);
        WireMessage q = WireMessage.of('Q', payload);
        WireMessage joined = WireMessage.joinedQueries(List.of(q, UPDATE), ReplayLog.SEPARATOR);
        byte[] p = joined.payload();
        assertThat(p["UPDATE t SET s = 'caf".length()]).isEqualTo((byte) 0xe9);   // é as one byte, not re-encoded
        assertThat(p[p.length - 1]).isZero();
        assertThat(p).hasSize(latin1.length + ReplayLog.SEPARATOR.length() + UPDATE.payload().length);
    }

    @Test
    void anythingThatMayChangeHowLaterTextReadsShipsTheLogAsItRan() {
        List<List<Object[]>> cases = List.of(
                List.<Object[]>of(new Object[]{WireMessage.query("SET standard_conforming_strings = off"), true}),   // a session command
                List.<Object[]>of(new Object[]{WireMessage.query("SELECT set_config('standard_conforming_strings', 'off', false)"), true}),
                List.<Object[]>of(new Object[]{WireMessage.query("UPDATE t SET v = pg_catalog.set_config('backslash_quote', 'on', true) WHERE k = 1"), false}),
                List.<Object[]>of(new Object[]{WireMessage.query("RESET ALL"), true}),
                List.<Object[]>of(new Object[]{WireMessage.query("SAVEPOINT s"), true}),
                List.<Object[]>of(new Object[]{WireMessage.query("CALL p()"), false}),
                List.<Object[]>of(new Object[]{WireMessage.query("DO $$ BEGIN PERFORM 1; END $$"), false}),
                List.<Object[]>of(new Object[]{WireMessage.query("COPY t FROM STDIN"), false}),
                List.<Object[]>of(new Object[]{WireMessage.query("(SELECT 1) UNION (SELECT 2)"), true}));
        for (List<Object[]> c : cases) {
            ReplayLog r = new ReplayLog();
            r.add(List.of(UPDATE), true, false, false, false);
            WireMessage m = (WireMessage) c.get(0)[0];
            r.add(List.of(m), true, (Boolean) c.get(0)[1], false, false);
            r.add(List.of(INSERT), true, false, false, false);
            List<WireMessage> log = logOf(UPDATE, m, INSERT);
            assertThat(r.shipped(log)).as(m.queryText()).isSameAs(log);
            assertThat(r.readsLeftOut()).isZero();
        }
    }

    @Test
    void aFailedUnitCodeTheClassifierDoesNotReadACatalogChangeOrTheExtendedProtocolShipTheLogAsItRan() {
        WireMessage parse = WireMessage.of('P', new byte[]{0});
        Object[][] cases = {
                {List.of(UPDATE), false, false, false},   // failed
                {List.of(UPDATE), true, true, false},     // ran code the classifier does not read (a trigger)
                {List.of(UPDATE), true, false, true},     // changed the catalog
                {List.of(parse, Messages.SYNC), true, false, false},
        };
        for (Object[] c : cases) {
            @SuppressWarnings("unchecked") List<WireMessage> unit = (List<WireMessage>) c[0];
            ReplayLog r = new ReplayLog();
            r.add(List.of(INSERT), true, false, false, false);
            r.add(unit, (Boolean) c[1], false, (Boolean) c[2], (Boolean) c[3]);
            r.add(List.of(SELECT), true, true, false, false);
            List<WireMessage> log = new ArrayList<>(List.of(INSERT));
            log.addAll(unit);
            log.add(SELECT);
            assertThat(r.shipped(log)).isSameAs(log);
        }
    }

    @Test
    void aReadRoutedAsAnUpdateIsKeptAndOnlyPlainStatementsCount() {
        ReplayLog r = new ReplayLog();
        WireMessage forUpdate = WireMessage.query("SELECT * FROM t WHERE k = 1 FOR UPDATE");   // the classifier counts it as a write
        r.add(List.of(forUpdate), true, false, false, false);
        r.add(List.of(WireMessage.query("with x as (select 1) update t set v = 2 where k = 1; delete from u where k = 3")), true, false, false, false);
        assertThat(r.shipped(logOf(forUpdate)).get(0).queryText()).startsWith("SELECT * FROM t WHERE k = 1 FOR UPDATE\n;\nwith x");
        assertThat(ReplayLog.only("SELECT 1; VALUES (2); TABLE t", java.util.Set.of("select", "values", "table"))).isTrue();
        assertThat(ReplayLog.only("SELECT 'unterminated", java.util.Set.of("select"))).isFalse();
        assertThat(ReplayLog.only("  ", java.util.Set.of("select"))).isFalse();
        assertThat(ReplayLog.only("/* c */ select 1", java.util.Set.of("select"))).isTrue();
    }

    @Test
    void aBlockWhoseOnlyUnitsReadShipsItsLog() {
        ReplayLog r = new ReplayLog();
        r.add(List.of(SELECT), true, true, false, false);
        List<WireMessage> log = logOf(SELECT);
        assertThat(r.shipped(log)).isSameAs(log);
    }

    /** {@link ReplayLog#only} as it was: the statements split out, then each one lexed again for its first word. */
    private static boolean onlyBySplitting(String text, java.util.Set<String> words) {
        if (org.wanrep.sql.SqlLexer.unterminated(text)) return false;
        List<String> statements = org.wanrep.sql.UnitClassifier.splitStatements(text);
        if (statements.isEmpty()) return false;
        for (String st : statements) {
            String first = null;
            for (org.wanrep.sql.SqlLexer.Token t : org.wanrep.sql.SqlLexer.tokens(st)) {
                if (!t.significant()) continue;
                first = t.word() ? org.wanrep.sql.SqlLexer.fold(t.text(st)) : null;
                break;
            }
            if (first == null || !words.contains(first)) return false;
        }
        if (!org.wanrep.sql.SqlText.containsIgnoreCase(text, "set_config")) return true;
        for (String f : org.wanrep.sql.SqlText.functionCalls(text)) if (f.equals("set_config") || f.endsWith(".set_config")) return false;
        return true;
    }

    /** The one-pass reading of statements' first words agrees with splitting the text and reading each piece. */
    @Test
    void onlyAgreesWithSplittingTheText() {
        long seed = Long.getLong("wanrep.test.seed", System.nanoTime());
        System.out.println("ReplayLogTest seed " + seed + " (-Dwanrep.test.seed=" + seed + " repeats it)");
        java.util.Random r = new java.util.Random(seed);
        String[] parts = {"SELECT 1", "select x from t", "UPDATE t SET v = 1", "(SELECT 1)", "vacuum", "-- c\n", "/* c */", " ", "\n", ";", ";",
                "'a;b'", "\"Select\"", "set_config('a', 'b', false)", "pg_catalog.set_config('x', 'y', true)", "$$;$$", "E'x'", "'open",
                "Insert INTO h VALUES (1)", "with x as (select 1) delete from t", "-- tail", "values (2)"};
        java.util.Set<String> words = java.util.Set.of("select", "with", "values", "table", "insert", "update", "delete", "merge");
        int agreedTrue = 0;
        for (int i = 0; i < 20_000; i++) {
            StringBuilder b = new StringBuilder();
            for (int k = r.nextInt(7); k >= 0; k--) b.append(parts[r.nextInt(parts.length)]).append(r.nextBoolean() ? " " : "");
            String text = b.toString();
            boolean expected = onlyBySplitting(text, words);
            assertThat(ReplayLog.only(text, words)).as("seed %d: %s", seed, text).isEqualTo(expected);
            if (expected) agreedTrue++;
        }
        assertThat(agreedTrue).as("texts of plain statements only").isGreaterThan(1000);
    }
}
