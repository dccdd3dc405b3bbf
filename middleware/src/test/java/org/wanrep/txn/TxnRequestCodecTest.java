package org.wanrep.txn;

import org.wanrep.wire.WireMessage;
import org.junit.jupiter.api.Test;
import org.wanrep.lock.TableSet;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class TxnRequestCodecTest {
    @Test
    void roundTrip() {
        TxnRequest r = new TxnRequest(new RequestId("boston", 42), TxnRequest.Kind.AUTOCOMMIT,
                TableSet.of(Set.of("public.a"), Set.of("public.b", "public.c")), "bank",
                List.of(new WireMessage((byte) 'Q', "UPDATE b SET x = 1\0".getBytes(StandardCharsets.UTF_8)), new WireMessage((byte) 'S', new byte[0])),
                1_790_000_000_000_000L, -7, java.util.Map.of("TimeZone", "Europe/Zurich", "search_path", "app, public"));
        TxnRequest d = TxnRequestCodec.decode(TxnRequestCodec.encode(r));
        assertThat(d.id()).isEqualTo(r.id());
        assertThat(d.kind()).isEqualTo(r.kind());
        assertThat(d.tables()).isEqualTo(r.tables());
        assertThat(d.database()).isEqualTo("bank");
        assertThat(d.timestampMicros()).isEqualTo(r.timestampMicros());
        assertThat(d.seed()).isEqualTo(-7);
        assertThat(d.settings()).isEqualTo(r.settings());
        assertThat(d.messages()).hasSize(2);
        assertThat(d.messages().get(0).type()).isEqualTo((byte) 'Q');
        assertThat(new String(d.messages().get(0).payload(), StandardCharsets.UTF_8)).isEqualTo("UPDATE b SET x = 1\0");
        TxnRequest all = new TxnRequest(new RequestId("x", 1), TxnRequest.Kind.EXCLUSIVE, TableSet.allTables(), "d", List.of(), 0, 0);
        assertThat(TxnRequestCodec.decode(TxnRequestCodec.encode(all)).tables().all()).isTrue();
        assertThat(d.shipsWriteSet()).isFalse();
        TxnRequest ws = new TxnRequest(new RequestId("x", 2), TxnRequest.Kind.WRITESET_LOG, TableSet.allTables(), "d", List.of(), 0, 0,
                java.util.Map.of(), true, new byte[]{1, 2, 3});
        TxnRequest wd = TxnRequestCodec.decode(TxnRequestCodec.encode(ws));
        assertThat(wd.shipsWriteSet()).isTrue();
        assertThat(wd.writeSet()).containsExactly(1, 2, 3);
        assertThat(wd.kind()).isEqualTo(TxnRequest.Kind.WRITESET_LOG);
        // what a site holds of them until they finish (flow.max_backlog_mb): messages' and write set's bytes
        assertThat(d.bytes()).isEqualTo("UPDATE b SET x = 1\0".length());
        assertThat(wd.bytes()).isEqualTo(3);
        // row locks travel too: every site enqueues the lock set the origin derived
        TableSet rows = new TableSet(Set.of("public.a"), Set.of("public.b", "public.h"), false, java.util.Map.of(
                "public.b", java.util.Map.of("5", org.wanrep.lock.LockMode.WRITE, "1\0x", org.wanrep.lock.LockMode.READ),
                "public.h", java.util.Map.of()));
        TxnRequest rr = new TxnRequest(new RequestId("x", 3), TxnRequest.Kind.AUTOCOMMIT, rows, "d", List.of(), 0, 0);
        assertThat(TxnRequestCodec.decode(TxnRequestCodec.encode(rr)).tables()).isEqualTo(rows);
        // the bytes do not depend on the maps' own order: keys are written sorted
        java.util.Map<String, java.util.Map<String, org.wanrep.lock.LockMode>> forward = new java.util.LinkedHashMap<>(), backward = new java.util.LinkedHashMap<>();
        java.util.Map<String, org.wanrep.lock.LockMode> k1 = new java.util.LinkedHashMap<>(), k2 = new java.util.LinkedHashMap<>();
        for (String k : List.of("1", "2", "10", "b")) k1.put(k, org.wanrep.lock.LockMode.WRITE);
        for (String k : List.of("b", "10", "2", "1")) k2.put(k, org.wanrep.lock.LockMode.WRITE);
        forward.put("public.a", k1);
        forward.put("public.b", k1);
        backward.put("public.b", k2);
        backward.put("public.a", k2);
        java.util.function.Function<java.util.Map<String, java.util.Map<String, org.wanrep.lock.LockMode>>, byte[]> enc = m -> TxnRequestCodec.encode(
                new TxnRequest(new RequestId("x", 9), TxnRequest.Kind.AUTOCOMMIT, new TableSet(Set.of(), Set.of("public.a", "public.b"), false, m),
                        "d", List.of(), 0, 0));
        assertThat(enc.apply(forward)).isEqualTo(enc.apply(backward));
        // a block to certify carries its snapshot position
        TxnRequest cert = TxnRequest.certify(new RequestId("x", 4), rows, "d", List.of(WireMessage.query("SELECT 1")), 5, 6, java.util.Map.of(), 1234);
        TxnRequest cd = TxnRequestCodec.decode(TxnRequestCodec.encode(cert));
        assertThat(cd.kind()).isEqualTo(TxnRequest.Kind.CERTIFY);
        assertThat(cd.snapshotGsn()).isEqualTo(1234);
        assertThat(cd.tables()).isEqualTo(rows);
        // and the positions of the rows it locked first thing
        TxnRequest withRows = TxnRequest.certify(new RequestId("x", 5), rows, "d", List.of(), 5, 6, java.util.Map.of(), 1234,
                java.util.Map.of("public.b\u00005", 1240L), false, null);
        assertThat(TxnRequestCodec.decode(TxnRequestCodec.encode(withRows)).rowPositions()).containsExactly(java.util.Map.entry("public.b\u00005", 1240L));
    }

    /** Settings are kept encoded and decoded between requests on a thread: each request still decodes to its own. */
    @Test
    void settingsOfOneRequestAfterAnother() {
        java.util.Map<String, String> a = java.util.Map.of("TimeZone", "UTC", "search_path", "app"), b = java.util.Map.of("TimeZone", "UTC", "search_path", "app2"),
                c = java.util.Map.of("TimeZone", "UTC", "search_path", "app", "DateStyle", "ISO"), none = java.util.Map.of();
        List<java.util.Map<String, String>> order = List.of(a, a, b, a, c, none, c, new java.util.HashMap<>(a), b);
        long seq = 0;
        for (java.util.Map<String, String> settings : order) {
            TxnRequest r = new TxnRequest(new RequestId("x", ++seq), TxnRequest.Kind.AUTOCOMMIT, TableSet.of(Set.of(), Set.of("public.t")), "d",
                    List.of(WireMessage.query("UPDATE t SET v = " + seq)), seq, seq, settings);
            TxnRequest d = TxnRequestCodec.decode(TxnRequestCodec.encode(r));
            assertThat(d.settings()).as("request %d", seq).isEqualTo(settings);
            assertThat(d.id().seq()).isEqualTo(seq);
            assertThat(new String(d.messages().get(0).payload(), StandardCharsets.UTF_8)).startsWith("UPDATE t SET v = " + seq);
        }
    }
}
