package org.wanrep.txn;

import org.junit.jupiter.api.Test;
import org.wanrep.wire.WireMessage;
import org.wanrep.writeset.ColumnValue;
import org.wanrep.writeset.RowChange;
import org.wanrep.writeset.WriteSet;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class WriteSetMessageCodecTest {
    @Test
    void roundTripOfACommittedAndAFailedTransaction() {
        WriteSet ws = new WriteSet("boston/1#7", List.of(new RowChange("public", "t", RowChange.Action.UPDATE,
                List.of(new ColumnValue("id", "integer", "1")), List.of(new ColumnValue("v", "text", "ü'\"")))));
        WriteSetMessage m = new WriteSetMessage(new RequestId("montreal", 7), "boston/1", true,
                List.of(WireMessage.of('C', "UPDATE 1\0".getBytes(StandardCharsets.UTF_8)), WireMessage.of('Z', new byte[]{'T'})),
                ws, Map.of("public.t_id_seq", 41L));
        WriteSetMessage d = WriteSetMessageCodec.decode(WriteSetMessageCodec.encode(m));
        assertThat(d.id()).isEqualTo(m.id());
        assertThat(d.executor()).isEqualTo("boston/1");
        assertThat(d.committed()).isTrue();
        assertThat(d.writeSet()).isEqualTo(ws);
        assertThat(d.sequences()).isEqualTo(Map.of("public.t_id_seq", 41L));
        assertThat(d.replies()).extracting(WireMessage::kind).containsExactly('C', 'Z');
        WriteSetMessage failed = new WriteSetMessage(new RequestId("x", 1), "x/1", false, List.of(), null, Map.of());
        assertThat(WriteSetMessageCodec.decode(WriteSetMessageCodec.encode(failed)).writeSet()).isNull();
    }
}
