package org.wanrep.writeset.capture;

import org.junit.jupiter.api.Test;
import org.wanrep.writeset.RowChange.Action;
import org.wanrep.writeset.capture.TestDecodingParser.Change;
import org.wanrep.writeset.capture.TestDecodingParser.Column;

import java.io.IOException;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.wanrep.writeset.capture.TestDecodingParser.parse;

/** Lines as PostgreSQL 15.20's test_decoding printed them (see PreparedCaptureTest for the live check). */
class TestDecodingParserTest {
    static Change change(String line) throws IOException { return (Change) parse(line); }

    @Test
    void transactionFraming() throws IOException {
        assertThat(parse("BEGIN")).isEqualTo(new TestDecodingParser.Begin());
        assertThat(parse("BEGIN 739")).isEqualTo(new TestDecodingParser.Begin());
        assertThat(parse("COMMIT")).isEqualTo(new TestDecodingParser.Commit());
        assertThat(parse("COMMIT 739")).isEqualTo(new TestDecodingParser.Commit());
        assertThat(parse("PREPARE TRANSACTION 'g1'")).isEqualTo(new TestDecodingParser.Prepare("g1"));
        assertThat(parse("PREPARE TRANSACTION 'g1 ''x'''")).isEqualTo(new TestDecodingParser.Prepare("g1 'x'"));
        assertThat(parse("PREPARE TRANSACTION E'back\\\\slash''q'")).isEqualTo(new TestDecodingParser.Prepare("back\\slash'q"));
        assertThat(parse("PREPARE TRANSACTION 'g', txid 740")).isEqualTo(new TestDecodingParser.Prepare("g"));
        assertThat(parse("PREPARE TRANSACTION ''")).isEqualTo(new TestDecodingParser.Prepare(""));
        assertThat(parse("COMMIT PREPARED 'g1 ''x'''")).isEqualTo(new TestDecodingParser.CommitPrepared("g1 'x'"));
        assertThat(parse("COMMIT PREPARED E'a\\\\b'")).isEqualTo(new TestDecodingParser.CommitPrepared("a\\b"));
        assertThat(parse("ROLLBACK PREPARED 'g2'")).isEqualTo(new TestDecodingParser.RollbackPrepared("g2"));
    }

    /** As PostgreSQL 15 prints them (pgbench -i truncates four tables at once); a row whose text looks alike stays a row. */
    @Test
    void truncates() throws IOException {
        assertThat(parse("table public.pgbench_accounts, public.pgbench_branches, public.pgbench_history: TRUNCATE: (no-flags)"))
                .isEqualTo(new TestDecodingParser.Truncate("public.pgbench_accounts, public.pgbench_branches, public.pgbench_history"));
        assertThat(parse("table public.t: TRUNCATE: restart_seqs cascade")).isEqualTo(new TestDecodingParser.Truncate("public.t"));
        assertThat((Object) parse("table public.t: INSERT: v[text]:'x: TRUNCATE: (no-flags)'")).isInstanceOf(Change.class);
        PreparedAssembler a = new PreparedAssembler(1 << 20);
        a.accept(parse("BEGIN"), 5, null);
        a.accept(parse("table public.t: TRUNCATE: (no-flags)"), 30, null);
        PreparedAssembler.Done d = a.accept(parse("PREPARE TRANSACTION 'g'"), 20, "0/9");
        assertThat(d.refusal() != null).isTrue();
        assertThat(d.refusal().getSQLState()).isEqualTo("0A000");
    }

    @Test
    void messages() throws IOException {
        assertThat(parse("message: transactional: 1 prefix: wanrep, sz: 4 content:tag1"))
                .isEqualTo(new TestDecodingParser.Message(true, "wanrep", "tag1"));
        assertThat(parse("message: transactional: 0 prefix: wanrep, sz: 5 content:nontx"))
                .isEqualTo(new TestDecodingParser.Message(false, "wanrep", "nontx"));
        assertThat(parse("message: transactional: 1 prefix: p, sz: 12 content:a\nb content:c"))
                .isEqualTo(new TestDecodingParser.Message(true, "p", "a\nb content:c"));
    }

    @Test
    void insertWithEveryValueForm() throws IOException {
        Change c = change("table public.t: INSERT: id[integer]:1 v[character varying]:'it''s' n[numeric]:3.50 a[integer[]]:'{1,2}' "
                + "b[boolean]:true bt[bytea]:'\\x01ff' ts[timestamp with time zone]:'2020-01-01 00:00:00+00' \"Odd]: col\"[text]:'x y' "
                + "f[double precision]:NaN j[jsonb]:'{\"a\": 1}' c[character]:'ab   ' bi[bit]:B'0101' vb[bit varying]:B'101' "
                + "e[\"we]:ird\"]:'b c' e2[\"My Schema\".\"odd type\"]:'x' ta[text[]]:'{\"a b\",\"c,\\\"d\",NULL,\"\"}' r[real]:-Infinity "
                + "i8[bigint]:-5 r2[real]:1e-45 g[double precision]:Infinity bf[boolean]:false z[text]:null em[text]:''");
        assertThat(c.schema()).isEqualTo("public");
        assertThat(c.table()).isEqualTo("t");
        assertThat(c.action()).isEqualTo(Action.INSERT);
        assertThat(c.oldKey()).isNull();
        assertThat(c.newTuple()).containsExactly(
                Column.of("id", "integer", "1"), Column.of("v", "character varying", "it's"), Column.of("n", "numeric", "3.50"),
                Column.of("a", "integer[]", "{1,2}"), Column.of("b", "boolean", "true"), Column.of("bt", "bytea", "\\x01ff"),
                Column.of("ts", "timestamp with time zone", "2020-01-01 00:00:00+00"), Column.of("Odd]: col", "text", "x y"),
                Column.of("f", "double precision", "NaN"), Column.of("j", "jsonb", "{\"a\": 1}"), Column.of("c", "character", "ab   "),
                Column.of("bi", "bit", "0101"), Column.of("vb", "bit varying", "101"), Column.of("e", "\"we]:ird\"", "b c"),
                Column.of("e2", "\"My Schema\".\"odd type\"", "x"), Column.of("ta", "text[]", "{\"a b\",\"c,\\\"d\",NULL,\"\"}"),
                Column.of("r", "real", "-Infinity"), Column.of("i8", "bigint", "-5"), Column.of("r2", "real", "1e-45"),
                Column.of("g", "double precision", "Infinity"), Column.of("bf", "boolean", "false"), Column.of("z", "text", null),
                Column.of("em", "text", ""));
    }

    @Test
    void newlinesBackslashesAndLookalikesInsideValues() throws IOException {
        Change c = change("table public.t: INSERT: id[integer]:4 \"Odd]: col\"[text]:'line1\nline2\\back\ttab ''q'' \"dq\"' "
                + "x[text]:' new-tuple: y[text]:null' w[text]:'null' u[text]:'unchanged-toast-datum'");
        assertThat(c.newTuple()).containsExactly(Column.of("id", "integer", "4"),
                Column.of("Odd]: col", "text", "line1\nline2\\back\ttab 'q' \"dq\""),
                Column.of("x", "text", " new-tuple: y[text]:null"), Column.of("w", "text", "null"),
                Column.of("u", "text", "unchanged-toast-datum"));
    }

    @Test
    void updatesWithAndWithoutOldKeyAndUnchangedToast() throws IOException {
        Change plain = change("table public.t: UPDATE: id[integer]:3 v[character varying]:'upd' big[text]:unchanged-toast-datum r[real]:1e-45");
        assertThat(plain.oldKey()).isNull();
        assertThat(plain.newTuple()).containsExactly(Column.of("id", "integer", "3"), Column.of("v", "character varying", "upd"),
                new Column("big", "text", null, true), Column.of("r", "real", "1e-45"));
        Change keyed = change("table public.t: UPDATE: old-key: id[integer]:2 new-tuple: id[integer]:5 v[character varying]:null");
        assertThat(keyed.oldKey()).containsExactly(Column.of("id", "integer", "2"));
        assertThat(keyed.newTuple()).containsExactly(Column.of("id", "integer", "5"), Column.of("v", "character varying", null));
        Change full = change("table public.full_: UPDATE: old-key: x[integer]:2 new-tuple: x[integer]:2 y[text]:'c'");
        assertThat(full.oldKey()).containsExactly(Column.of("x", "integer", "2"));   // NULL y left out of the old key
        Change noData = change("table public.t: UPDATE: (no-tuple-data)");
        assertThat(noData.oldKey()).isNull();
        assertThat(noData.newTuple()).isNull();
    }

    @Test
    void deletesAndQuotedNames() throws IOException {
        Change d = change("table public.ui: DELETE: a[integer]:7 b[integer]:2");
        assertThat(d.action()).isEqualTo(Action.DELETE);
        assertThat(d.oldKey()).containsExactly(Column.of("a", "integer", "7"), Column.of("b", "integer", "2"));
        assertThat(d.newTuple()).isNull();
        Change none = change("table public.nopk: DELETE: (no-tuple-data)");
        assertThat(none.oldKey()).isNull();
        assertThat(none.newTuple()).isNull();
        Change q = change("table \"My Schema\".\"Tab \"\"q\"\" ]:\": UPDATE: id[integer]:1 \"x y\"[text]:'w'");
        assertThat(q.schema()).isEqualTo("My Schema");
        assertThat(q.table()).isEqualTo("Tab \"q\" ]:");
        assertThat(q.newTuple()).containsExactly(Column.of("id", "integer", "1"), Column.of("x y", "text", "w"));
        Change arr = change("table s.\"T\": INSERT: m[\"My Schema\".\"odd \"\"]:\"\" type\"[]]:'{x}'");
        assertThat(arr.newTuple()).containsExactly(Column.of("m", "\"My Schema\".\"odd \"\"]:\"\" type\"[]", "{x}"));
        assertThat(change("table public.empty: INSERT:").newTuple()).isEmpty();
    }

    @Test
    void malformedLinesAreRefusedClearly() {
        for (String bad : List.of("", "hello", "BEGINX", "COMMIT X", "table public.t INSERT: id[integer]:1",
                "table public.t: MERGE: id[integer]:1", "table public.t: INSERT: id[integer]:'unterminated",
                "table public.t: INSERT: id[integer:1", "table public.t: INSERT: id[integer]:", "table public.t: INSERT: id[integer]:1x2",
                "table public.t: INSERT: id[integer]:'a'b", "table public.t: INSERT: id[integer]:1  v[text]:null",
                "table public.t: INSERT: \"unterminated[text]:null", "table public.t: INSERT: b[bit]:B'012'",
                "table public.t: DELETE: (no-tuple-data) trailing", "table public.: INSERT: a[int]:1",
                "PREPARE TRANSACTION g1", "PREPARE TRANSACTION 'g1", "PREPARE TRANSACTION 'g1' junk", "COMMIT PREPARED",
                "message: transactional: 2 prefix: x, sz: 1 content:a", "message: something"))
            assertThatThrownBy(() -> parse(bad)).as(bad).isInstanceOf(IOException.class).hasMessageContaining("malformed test_decoding output");
    }
}
