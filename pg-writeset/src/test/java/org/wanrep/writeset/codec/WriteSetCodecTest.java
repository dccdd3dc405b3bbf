package org.wanrep.writeset.codec;

import org.junit.jupiter.api.Test;
import org.wanrep.writeset.ColumnValue;
import org.wanrep.writeset.RowChange;
import org.wanrep.writeset.RowChange.Action;
import org.wanrep.writeset.WriteSet;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WriteSetCodecTest {
    @Test
    void roundTripKeepsUnicodeNullsAbsentColumnsAndBigValues() {
        String big = "x".repeat(300_000) + "€";
        List<RowChange> rows = List.of(
                new RowChange("public", "t", Action.INSERT, List.of(), List.of(
                        new ColumnValue("id", "integer", "1"),
                        new ColumnValue("tx", "text", "it's \"q\" \\ ünï\n新 🎉\u0000-free"),
                        new ColumnValue("n", "numeric(40,10)", "123456789012345678901234567890.1234567890"),
                        new ColumnValue("nothing", "text", null),
                        new ColumnValue("big", "text", big))),
                // "big" absent: TOAST-unchanged, must not come back as NULL
                new RowChange("public", "t", Action.UPDATE, List.of(new ColumnValue("id", "integer", "1")),
                        List.of(new ColumnValue("id", "integer", "2"), new ColumnValue("tx", "text", ""))),
                new RowChange("schéma", "tåble", Action.DELETE, List.of(new ColumnValue("k", "text", "ключ")), List.of()));
        WriteSet ws = new WriteSet("site1:42", rows);
        byte[] bytes = WriteSetCodec.encode(ws);
        WriteSet back = WriteSetCodec.decode(bytes);
        assertThat(back).isEqualTo(ws);
        assertThat(back.rows().get(1).values()).extracting(ColumnValue::name).containsExactly("id", "tx");
        assertThat(back.rows().get(0).values().get(3).isNull()).isTrue();
        assertThat(back.rows().get(1).values().get(1).value()).isEmpty();   // empty string is not NULL
    }

    @Test
    void namesAreSentOncePerWriteSet() {
        List<RowChange> rows = new ArrayList<>();
        for (int i = 0; i < 1000; i++)
            rows.add(new RowChange("public", "account_balance_history", Action.UPDATE,
                    List.of(new ColumnValue("account_id", "bigint", Integer.toString(i))),
                    List.of(new ColumnValue("account_id", "bigint", Integer.toString(i)), new ColumnValue("balance", "numeric(12,2)", "10.00"))));
        byte[] bytes = WriteSetCodec.encode(new WriteSet("t", rows));
        assertThat(bytes.length).isLessThan(1000 * 30);
        assertThat(WriteSetCodec.decode(bytes).rows()).isEqualTo(rows);
    }

    @Test
    void emptyWriteSetAndCorruptInput() {
        WriteSet empty = new WriteSet("", List.of());
        assertThat(WriteSetCodec.decode(WriteSetCodec.encode(empty))).isEqualTo(empty);
        byte[] bytes = WriteSetCodec.encode(new WriteSet("t", List.of(new RowChange("s", "t", Action.INSERT, List.of(), List.of(new ColumnValue("a", "int", "1"))))));
        assertThatThrownBy(() -> WriteSetCodec.decode(Arrays.copyOf(bytes, bytes.length - 2))).isInstanceOf(IllegalArgumentException.class);
        bytes[0] = 9;
        assertThatThrownBy(() -> WriteSetCodec.decode(bytes)).hasMessageContaining("version");
    }
}
