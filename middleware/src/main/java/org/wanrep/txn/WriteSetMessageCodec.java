package org.wanrep.txn;

import org.wanrep.wire.WireMessage;
import org.wanrep.writeset.WriteSet;
import org.wanrep.writeset.codec.WriteSetCodec;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Binary encoding of {@link WriteSetMessage}; the rows use pg-writeset's compact {@link WriteSetCodec}. */
public final class WriteSetMessageCodec {
    private WriteSetMessageCodec() {}

    private static final byte VERSION = 1;

    public static byte[] encode(WriteSetMessage m) {
        ByteArrayOutputStream bos = new ByteArrayOutputStream(256);
        try (DataOutputStream out = new DataOutputStream(bos)) {
            out.writeByte(VERSION);
            out.writeUTF(m.id().site());
            out.writeLong(m.id().seq());
            out.writeUTF(m.executor());
            out.writeBoolean(m.committed());
            out.writeInt(m.replies().size());
            for (WireMessage r : m.replies()) {
                out.writeByte(r.type());
                out.writeInt(r.payload().length);
                out.write(r.payload());
            }
            out.writeInt(m.sequences().size());
            for (var e : new TreeMap<>(m.sequences()).entrySet()) {
                out.writeUTF(e.getKey());
                out.writeLong(e.getValue());
            }
            out.writeBoolean(m.writeSet() != null);
            if (m.writeSet() != null) {
                byte[] ws = WriteSetCodec.encode(m.writeSet());
                out.writeInt(ws.length);
                out.write(ws);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bos.toByteArray();
    }

    public static WriteSetMessage decode(byte[] b) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(b))) {
            byte v = in.readByte();
            if (v != VERSION) throw new IllegalArgumentException("write-set message version " + v + ", this site understands " + VERSION);
            RequestId id = new RequestId(in.readUTF(), in.readLong());
            String executor = in.readUTF();
            boolean committed = in.readBoolean();
            int n = in.readInt();
            List<WireMessage> replies = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                byte type = in.readByte();
                byte[] p = new byte[in.readInt()];
                in.readFully(p);
                replies.add(new WireMessage(type, p));
            }
            int ns = in.readInt();
            Map<String, Long> seqs = new TreeMap<>();
            for (int i = 0; i < ns; i++) seqs.put(in.readUTF(), in.readLong());
            WriteSet ws = null;
            if (in.readBoolean()) {
                byte[] w = new byte[in.readInt()];
                in.readFully(w);
                ws = WriteSetCodec.decode(w);
            }
            return new WriteSetMessage(id, executor, committed, replies, ws, seqs);
        } catch (IOException e) {
            throw new UncheckedIOException("corrupt write-set message", e);
        }
    }
}
