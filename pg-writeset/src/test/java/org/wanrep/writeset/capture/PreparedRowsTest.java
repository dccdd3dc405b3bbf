package org.wanrep.writeset.capture;

import org.junit.jupiter.api.Test;
import org.wanrep.writeset.ColumnValue;
import org.wanrep.writeset.RowChange;
import org.wanrep.writeset.WriteSetRefusedException;
import org.wanrep.writeset.capture.PreparedRows.Name;
import org.wanrep.writeset.capture.PreparedRows.Table;
import org.wanrep.writeset.capture.TestDecodingParser.Change;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Conversion to RowChange and transaction assembly, without a server. */
class PreparedRowsTest {
    static final Map<Name, Table> TABLES = Map.of(
            new Name("public", "t"), new Table('d', types("id", "integer", "c", "character(5)", "big", "text"), List.of("id")),
            new Name("public", "full_"), new Table('f', types("x", "integer", "y", "text"), List.of()),
            new Name("public", "nopk"), new Table('d', types("x", "integer", "y", "text"), List.of()),
            new Name("public", "ui"), new Table('i', types("a", "integer", "b", "integer", "c", "text"), List.of("a", "b")));

    static Map<String, String> types(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) m.put(kv[i], kv[i + 1]);
        return m;
    }

    static List<RowChange> rows(String... lines) throws Exception {
        List<TestDecodingParser.Change> cs = new java.util.ArrayList<>();
        for (String l : lines) cs.add((TestDecodingParser.Change) TestDecodingParser.parse(l));
        return PreparedRows.rows(cs, TABLES);
    }

    @Test
    void keysAndTypesComeFromTheCatalog() throws Exception {
        List<RowChange> r = rows("table public.t: INSERT: id[integer]:1 c[character]:'ab   ' big[text]:'x'",
                "table public.t: UPDATE: id[integer]:1 c[character]:'q    ' big[text]:unchanged-toast-datum",
                "table public.t: UPDATE: old-key: id[integer]:1 new-tuple: id[integer]:2 c[character]:null big[text]:unchanged-toast-datum",
                "table public.t: DELETE: id[integer]:2",
                "table public.full_: UPDATE: old-key: x[integer]:2 new-tuple: x[integer]:2 y[text]:'c'",
                "table public.full_: DELETE: y[text]:'b'",
                "table public.ui: UPDATE: a[integer]:1 b[integer]:2 c[text]:'d'");
        assertThat(r.get(0)).isEqualTo(new RowChange("public", "t", RowChange.Action.INSERT, List.of(),
                List.of(new ColumnValue("id", "integer", "1"), new ColumnValue("c", "character(5)", "ab   "), new ColumnValue("big", "text", "x"))));
        assertThat(r.get(1).key()).containsExactly(new ColumnValue("id", "integer", "1"));
        assertThat(r.get(1).values()).extracting(ColumnValue::name).containsExactly("id", "c");   // TOAST-unchanged: absent
        assertThat(r.get(2).key()).containsExactly(new ColumnValue("id", "integer", "1"));
        assertThat(r.get(2).values()).containsExactly(new ColumnValue("id", "integer", "2"), new ColumnValue("c", "character(5)", null));
        assertThat(r.get(3)).isEqualTo(new RowChange("public", "t", RowChange.Action.DELETE, List.of(new ColumnValue("id", "integer", "2")), List.of()));
        assertThat(r.get(4).key()).containsExactly(new ColumnValue("x", "integer", "2"), new ColumnValue("y", "text", null));
        assertThat(r.get(5).key()).containsExactly(new ColumnValue("x", "integer", null), new ColumnValue("y", "text", "b"));
        assertThat(r.get(6).key()).containsExactly(new ColumnValue("a", "integer", "1"), new ColumnValue("b", "integer", "2"));
    }

    @Test
    void refusals() throws Exception {
        assertThatThrownBy(() -> rows("table public.nopk: UPDATE: x[integer]:1 y[text]:'b'")).isInstanceOf(WriteSetRefusedException.class)
                .hasMessageContaining("nopk").extracting(e -> ((WriteSetRefusedException) e).getSQLState()).isEqualTo("55000");
        assertThatThrownBy(() -> rows("table public.t: DELETE: (no-tuple-data)"))
                .extracting(e -> ((WriteSetRefusedException) e).getSQLState()).isEqualTo("55000");
        assertThatThrownBy(() -> rows("table public.gone: INSERT: x[integer]:1"))
                .hasMessageContaining("not in the catalog").extracting(e -> ((WriteSetRefusedException) e).getSQLState()).isEqualTo("0A000");
        assertThatThrownBy(() -> rows("table public.t: INSERT: id[integer]:1 added[text]:'x'")).hasMessageContaining("added");
        assertThatThrownBy(() -> rows("table public.t: UPDATE: id[integer]:unchanged-toast-datum c[character]:null")).hasMessageContaining("identity column id");
        assertThat(catchNone()).isTrue();
    }

    private static boolean catchNone() throws Exception {
        return rows("table public.nopk: INSERT: x[integer]:1 y[text]:'a'").get(0).key().isEmpty();   // inserts need no key
    }

    @Test
    void assemblerHandsOverPreparesOnlyAndBoundsMemory() throws IOException {
        PreparedAssembler a = new PreparedAssembler(100);
        String row = "table public.t: INSERT: id[integer]:1";
        assertThat(a.accept(TestDecodingParser.parse("BEGIN"), 5, "0/1")).isNull();
        assertThat(a.accept(TestDecodingParser.parse(row), 60, "0/2")).isNull();
        assertThat(a.accept(TestDecodingParser.parse("message: transactional: 1 prefix: wanrep, sz: 1 content:x"), 10, "0/3")).isNull();
        PreparedAssembler.Done d = a.accept(TestDecodingParser.parse("PREPARE TRANSACTION 'g'"), 5, "0/4");
        assertThat(d.gid()).isEqualTo("g");
        assertThat(d.lsn()).isEqualTo("0/4");
        assertThat(d.changes()).hasSize(1);
        assertThat((Object) d.refusal()).isNull();
        // an ordinary transaction: discarded, only its LSN matters
        a.accept(TestDecodingParser.parse("BEGIN"), 5, "0/5");
        a.accept(TestDecodingParser.parse(row), 60, "0/6");
        assertThat(a.accept(TestDecodingParser.parse("COMMIT"), 6, "0/7")).isEqualTo(new PreparedAssembler.Done(null, "0/7", List.of(), null));
        assertThat(a.accept(TestDecodingParser.parse("COMMIT PREPARED 'g'"), 6, "0/8").isPrepare()).isFalse();
        // too big: rows dropped, refused with 54000
        a.accept(TestDecodingParser.parse("BEGIN"), 5, "0/9");
        a.accept(TestDecodingParser.parse(row), 60, "0/a");
        a.accept(TestDecodingParser.parse(row), 60, "0/b");
        PreparedAssembler.Done big = a.accept(TestDecodingParser.parse("PREPARE TRANSACTION 'big'"), 5, "0/c");
        assertThat(big.changes()).isEmpty();
        assertThat(big.refusal().getSQLState()).isEqualTo("54000");
        // a poisoned transaction is refused, the next one is fine
        a.accept(TestDecodingParser.parse("BEGIN"), 5, "0/d");
        a.poison("garbage");
        assertThat(a.accept(TestDecodingParser.parse("PREPARE TRANSACTION 'p'"), 5, "0/e").refusal().getSQLState()).isEqualTo("XX000");
        a.accept(TestDecodingParser.parse("BEGIN"), 5, "0/f");
        assertThat((Object) a.accept(TestDecodingParser.parse("PREPARE TRANSACTION 'ok'"), 5, "0/10").refusal()).isNull();
        // a reconnect forgets the half transaction
        a.accept(TestDecodingParser.parse("BEGIN"), 5, "0/11");
        a.reset();
        assertThat(a.accept(TestDecodingParser.parse(row), 60, "0/12")).isNull();
        assertThat(a.isOpen()).isFalse();
    }

    /** A kept description fits the printed rows, or it is looked up again: columns, printed types, the identity printed. */
    @Test
    void describesChecksColumnsTypesAndTheIdentity() throws IOException {
        Table t = new Table('d', types("id", "integer", "c", "bpchar", "n", "public.money2"), List.of("id"),
                Map.of("id", "integer", "c", "character", "n", "public.money2"));
        Change ins = (Change) TestDecodingParser.parse("table public.t: INSERT: id[integer]:1 c[character]:'ab' n[money2]:'1'");
        assertThat(PreparedRows.describes(t, ins)).as("an unqualified printed type of a qualified one").isTrue();
        assertThat(PreparedRows.describes(t, (Change) TestDecodingParser.parse("table public.t: INSERT: id[integer]:1 c[character]:'ab'"))).as("a column fewer").isFalse();
        assertThat(PreparedRows.describes(t, (Change) TestDecodingParser.parse("table public.t: INSERT: id[bigint]:1 c[character]:'ab' n[money2]:'1'"))).as("another type").isFalse();
        assertThat(PreparedRows.describes(t, (Change) TestDecodingParser.parse("table public.t: UPDATE: id[integer]:1 c[character]:'ab' n[money2]:'1'"))).isTrue();
        assertThat(PreparedRows.describes(t, (Change) TestDecodingParser.parse("table public.t: DELETE: id[integer]:1"))).isTrue();
        assertThat(PreparedRows.describes(t, (Change) TestDecodingParser.parse("table public.t: DELETE: id[integer]:1 c[character]:'ab' n[money2]:'1'")))
                .as("a full identity printed where a key was described").isFalse();
        Table full = new Table('f', types("id", "integer", "c", "bpchar"), List.of(), Map.of("id", "integer", "c", "character"));
        assertThat(PreparedRows.describes(full, (Change) TestDecodingParser.parse("table public.t: UPDATE: id[integer]:1 c[character]:'x'")))
                .as("no old row where a full identity was described").isFalse();
        assertThat(PreparedRows.describes(full, (Change) TestDecodingParser.parse("table public.t: DELETE: id[integer]:1"))).as("NULLs left out: looked up").isFalse();
        assertThat(PreparedRows.describes(new Table('d', t.types(), List.of("id")), ins)).as("read without printed types").isFalse();
    }
}
