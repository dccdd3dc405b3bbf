package org.wanrep.writeset.apply;

import org.junit.jupiter.api.Test;
import org.wanrep.writeset.ColumnValue;
import org.wanrep.writeset.RowChange;
import org.wanrep.writeset.RowChange.Action;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class WriteSetApplierPlanTest {
    static RowChange upd(String table, int id, String... cols) {
        List<ColumnValue> vals = new java.util.ArrayList<>();
        for (String c : cols) vals.add(new ColumnValue(c, "text", "v"));
        return new RowChange("public", table, Action.UPDATE, List.of(new ColumnValue("id", "integer", Integer.toString(id))), vals);
    }

    @Test
    void statementsCastEveryValueAndSetOnlyPresentColumns() {
        RowChange r = new RowChange("public", "Odd\"Name", Action.UPDATE, List.of(new ColumnValue("id", "integer", "1")),
                List.of(new ColumnValue("n", "numeric(40,10)", "1.5"), new ColumnValue("j", "jsonb", "{\"a\": \"it's\"}")));
        assertThat(WriteSetApplier.sql(r)).isEqualTo("UPDATE \"public\".\"Odd\"\"Name\" SET \"n\" = ?::numeric(40,10), \"j\" = ?::jsonb WHERE \"id\" = ?::integer");
        assertThat(WriteSetApplier.literalSql(r)).isEqualTo(
                "UPDATE \"public\".\"Odd\"\"Name\" SET \"n\" = '1.5'::numeric(40,10), \"j\" = '{\"a\": \"it''s\"}'::jsonb WHERE \"id\" = '1'::integer");
        RowChange full = new RowChange("s", "t", Action.DELETE, List.of(new ColumnValue("a", "integer", "1"), new ColumnValue("b", "text", null)), List.of());
        assertThat(WriteSetApplier.sql(full)).isEqualTo("DELETE FROM \"s\".\"t\" WHERE \"a\" = ?::integer AND \"b\" IS NULL");
        RowChange ins = new RowChange("s", "t", Action.INSERT, List.of(), List.of(new ColumnValue("a", "integer", null), new ColumnValue("b", "text", "x\\y")));
        assertThat(WriteSetApplier.literalSql(ins)).isEqualTo("INSERT INTO \"s\".\"t\" (\"a\", \"b\") OVERRIDING SYSTEM VALUE VALUES (NULL::integer, 'x\\y'::text)");
        // a key column the update leaves as it was is not set (a GENERATED ALWAYS identity key refuses even its own value)
        RowChange same = new RowChange("s", "t", Action.UPDATE, List.of(new ColumnValue("id", "integer", "7")),
                List.of(new ColumnValue("id", "integer", "7"), new ColumnValue("v", "text", "x")));
        assertThat(WriteSetApplier.sql(same)).isEqualTo("UPDATE \"s\".\"t\" SET \"v\" = ?::text WHERE \"id\" = ?::integer");
        RowChange moved = new RowChange("s", "t", Action.UPDATE, List.of(new ColumnValue("id", "integer", "7")),
                List.of(new ColumnValue("id", "integer", "8"), new ColumnValue("v", "text", "x")));
        assertThat(WriteSetApplier.sql(moved)).isEqualTo("UPDATE \"s\".\"t\" SET \"id\" = ?::integer, \"v\" = ?::text WHERE \"id\" = ?::integer");
        RowChange onlyKey = new RowChange("s", "t", Action.UPDATE, List.of(new ColumnValue("id", "integer", "7")), List.of(new ColumnValue("id", "integer", "7")));
        assertThat(WriteSetApplier.sql(onlyKey)).isEqualTo("UPDATE \"s\".\"t\" SET \"id\" = \"id\" WHERE \"id\" = ?::integer");
    }

    @Test
    void groupsKeepPerTableOrderAndSplitOnShapeChange() {
        List<RowChange> rows = List.of(upd("a", 1, "x"), upd("b", 1, "x"), upd("a", 2, "x"), upd("a", 3, "x", "y"), upd("a", 4, "x"), upd("b", 2, "x"));
        List<WriteSetApplier.Group> g = WriteSetApplier.plan(rows);
        assertThat(g).extracting(x -> x.rows().size()).containsExactly(2, 2, 1, 1);
        assertThat(g.get(0).rows()).extracting(r -> r.key().get(0).value()).containsExactly("1", "2");
        assertThat(g.get(1).rows()).extracting(RowChange::table).containsExactly("b", "b");
        assertThat(g.get(2).rows().get(0).values()).hasSize(2);
        assertThat(g.get(3).rows().get(0).key().get(0).value()).isEqualTo("4");
    }
}
