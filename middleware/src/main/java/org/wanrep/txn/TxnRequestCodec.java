package org.wanrep.txn;

import org.wanrep.wire.WireMessage;
import org.wanrep.lock.TableSet;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** Binary encoding of {@link TxnRequest} as a group-communication payload. */
public final class TxnRequestCodec {
    private TxnRequestCodec() {}

    private static final byte VERSION = 6;   // 4: row locks; 5: certified blocks (snapshot position); 6: their rows' positions

    public static byte[] encode(TxnRequest r) {
        int size = 64 + r.writeSet().length;
        for (WireMessage m : r.messages()) size += m.payload().length + 5;
        ByteArrayOutputStream bos = new ByteArrayOutputStream(size);
        try (DataOutputStream out = new DataOutputStream(bos)) {
            out.writeByte(VERSION);
            out.writeUTF(r.id().site());
            out.writeLong(r.id().seq());
            out.writeByte(r.kind().ordinal());
            out.writeBoolean(r.tables().all());
            writeSet(out, r.tables().reads());
            writeSet(out, r.tables().writes());
            // row locks travel with the request: every site must enqueue the same lock set
            var rows = new java.util.TreeMap<>(r.tables().rows());
            out.writeInt(rows.size());
            for (var t : rows.entrySet()) {
                out.writeUTF(t.getKey());
                out.writeInt(t.getValue().size());
                for (var k : new java.util.TreeMap<>(t.getValue()).entrySet()) {
                    out.writeUTF(k.getKey());
                    out.writeByte(k.getValue().ordinal());
                }
            }
            out.writeUTF(r.database());
            out.writeLong(r.timestampMicros());
            out.writeLong(r.seed());
            out.writeInt(r.settings().size());
            for (var e : new java.util.TreeMap<>(r.settings()).entrySet()) {
                out.writeUTF(e.getKey());
                out.writeUTF(e.getValue());
            }
            out.writeInt(r.messages().size());
            for (WireMessage m : r.messages()) {
                out.writeByte(m.type());
                out.writeInt(m.payload().length);
                out.write(m.payload());
            }
            out.writeBoolean(r.shipsWriteSet());
            out.writeInt(r.writeSet().length);
            out.write(r.writeSet());
            out.writeBoolean(r.changesCatalog());
            out.writeLong(r.snapshotGsn());
            out.writeInt(r.rowPositions().size());
            for (var e : new java.util.TreeMap<>(r.rowPositions()).entrySet()) {
                out.writeUTF(e.getKey());
                out.writeLong(e.getValue());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bos.toByteArray();
    }

    public static TxnRequest decode(byte[] b) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(b))) {
            byte v = in.readByte();
            if (v != VERSION) throw new IllegalArgumentException("transaction request version " + v + ", this site understands " + VERSION);
            RequestId id = new RequestId(in.readUTF(), in.readLong());
            TxnRequest.Kind kind = TxnRequest.Kind.values()[in.readByte()];
            boolean all = in.readBoolean();
            Set<String> reads = readSet(in), writes = readSet(in);
            java.util.Map<String, java.util.Map<String, org.wanrep.lock.LockMode>> rows = new java.util.HashMap<>();
            for (int t = in.readInt(); t > 0; t--) {
                String table = in.readUTF();
                java.util.Map<String, org.wanrep.lock.LockMode> keys = new java.util.HashMap<>();
                for (int k = in.readInt(); k > 0; k--) keys.put(in.readUTF(), org.wanrep.lock.LockMode.values()[in.readByte()]);
                rows.put(table, keys);
            }
            String db = in.readUTF();
            long ts = in.readLong(), seed = in.readLong();
            int ns = in.readInt();
            java.util.Map<String, String> settings = new java.util.LinkedHashMap<>();
            for (int i = 0; i < ns; i++) settings.put(in.readUTF(), in.readUTF());
            int n = in.readInt();
            List<WireMessage> ms = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                byte type = in.readByte();
                byte[] p = new byte[in.readInt()];
                in.readFully(p);
                ms.add(new WireMessage(type, p));
            }
            boolean ships = in.readBoolean();
            byte[] ws = new byte[in.readInt()];
            in.readFully(ws);
            boolean ddl = in.readBoolean();
            long snapshot = in.readLong();
            java.util.Map<String, Long> positions = new java.util.HashMap<>();
            for (int i = in.readInt(); i > 0; i--) positions.put(in.readUTF(), in.readLong());
            return new TxnRequest(id, kind, new TableSet(reads, writes, all, rows), db, ms, ts, seed, settings, ships, ws, ddl, snapshot, positions);
        } catch (IOException e) {
            throw new UncheckedIOException("corrupt transaction request", e);
        }
    }

    private static void writeSet(DataOutputStream out, Set<String> s) throws IOException {
        out.writeInt(s.size());
        for (String x : s) out.writeUTF(x);
    }

    private static Set<String> readSet(DataInputStream in) throws IOException {
        int n = in.readInt();
        Set<String> s = new HashSet<>();
        for (int i = 0; i < n; i++) s.add(in.readUTF());
        return s;
    }
}
