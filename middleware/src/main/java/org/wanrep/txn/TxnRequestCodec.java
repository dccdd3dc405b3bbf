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
        byte[] settings = settingsBytes(r.settings());
        // sized once: the stream's growth (a copy each time) was a tenth of the encoding's cost
        int size = 64 + r.writeSet().length + settings.length + 48 * (r.tables().reads().size() + r.tables().writes().size() + r.rowPositions().size());
        for (var t : r.tables().rows().values()) size += 48 + 24 * t.size();
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
            var rows = r.tables().rows();
            out.writeInt(rows.size());
            for (String table : sortedKeys(rows)) {
                var keys = rows.get(table);
                out.writeUTF(table);
                out.writeInt(keys.size());
                for (String k : sortedKeys(keys)) {
                    out.writeUTF(k);
                    out.writeByte(keys.get(k).ordinal());
                }
            }
            out.writeUTF(r.database());
            out.writeLong(r.timestampMicros());
            out.writeLong(r.seed());
            out.write(settings);
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
            var positions = r.rowPositions();
            out.writeInt(positions.size());
            for (String k : sortedKeys(positions)) {
                out.writeUTF(k);
                out.writeLong(positions.get(k));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bos.toByteArray();
    }

    private static final String[] NO_KEYS = {};

    /** The map's keys in order: the bytes do not depend on the map's own order (a sorted array, not a TreeMap copy). */
    private static String[] sortedKeys(java.util.Map<String, ?> m) {
        if (m.isEmpty()) return NO_KEYS;
        String[] keys = m.keySet().toArray(NO_KEYS);
        if (keys.length > 1) java.util.Arrays.sort(keys);
        return keys;
    }

    public static TxnRequest decode(byte[] b) {
        ByteArrayInputStream bis = new ByteArrayInputStream(b);
        try (DataInputStream in = new DataInputStream(bis)) {
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
            java.util.Map<String, String> settings = readSettings(in, bis, b);
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

    /**
     * A session's settings travel with each of its updates and rarely change: the last map encoded on this thread (the
     * session's own, immutable, see ClientSession) is kept with its bytes, and the last block of bytes decoded on this
     * thread (a site's delivery) with its map.
     */
    private static final ThreadLocal<Object[]> SETTINGS_OUT = ThreadLocal.withInitial(() -> new Object[2]);
    private static final ThreadLocal<Object[]> SETTINGS_IN = ThreadLocal.withInitial(() -> new Object[2]);

    /** The settings as their count and name/value pairs in name order (every site decodes the same). */
    static byte[] settingsBytes(java.util.Map<String, String> settings) {
        Object[] memo = SETTINGS_OUT.get();
        if (memo[0] == settings) return (byte[]) memo[1];
        ByteArrayOutputStream bos = new ByteArrayOutputStream(16 + 32 * settings.size());
        try (DataOutputStream out = new DataOutputStream(bos)) {
            out.writeInt(settings.size());
            for (String k : sortedKeys(settings)) {
                out.writeUTF(k);
                out.writeUTF(settings.get(k));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        byte[] bytes = bos.toByteArray();
        memo[0] = settings;
        memo[1] = bytes;
        return bytes;
    }

    /**
     * The settings block at the stream's position in {@code b}. The block is self-delimiting (a count, then that many
     * pairs of length-prefixed strings), so bytes equal to the last block decoded here are that block.
     */
    @SuppressWarnings("unchecked")
    private static java.util.Map<String, String> readSettings(DataInputStream in, ByteArrayInputStream bis, byte[] b) throws IOException {
        int at = b.length - bis.available();
        Object[] memo = SETTINGS_IN.get();
        byte[] known = (byte[]) memo[0];
        if (known != null && b.length - at >= known.length && java.util.Arrays.equals(known, 0, known.length, b, at, at + known.length)) {
            in.skipNBytes(known.length);
            return (java.util.Map<String, String>) memo[1];
        }
        int ns = in.readInt();
        java.util.Map<String, String> settings = new java.util.HashMap<>();
        for (int i = 0; i < ns; i++) settings.put(in.readUTF(), in.readUTF());
        java.util.Map<String, String> read = java.util.Map.copyOf(settings);
        int end = b.length - bis.available();
        if (end - at <= 1 << 16) {   // kept: a session's few settings, not a pathological block
            memo[0] = java.util.Arrays.copyOfRange(b, at, end);
            memo[1] = read;
        }
        return read;
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
