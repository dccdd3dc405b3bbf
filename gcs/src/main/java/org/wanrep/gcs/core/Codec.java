package org.wanrep.gcs.core;

import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.MsgId;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Compact binary encoding of {@link Proto} messages for the wire. A frame is one message (its first byte is
 * its type) or a bundle of several ({@link #bundle}: the type byte {@code BUNDLE}, a count, then each
 * encoded message with its length); {@link #decodeAll} reads either.
 */
public final class Codec {
    private Codec() {}

    private static final byte DATA = 1, ORDER = 2, ACK = 3, FLUSH_STATE = 4, PROPOSAL = 5, PROPOSAL_ACK = 6, COMMIT = 7, BUNDLE = 8;
    private static final Delivery[] DELIVERIES = Delivery.values();

    public static byte[] encode(Proto p) {
        int hint = p instanceof Proto.Data d ? d.payload().length + 32 : 128;
        ByteArrayOutputStream bos = new ByteArrayOutputStream(hint);
        try (DataOutputStream out = new DataOutputStream(bos)) {
            switch (p) {
                case Proto.Data d -> {
                    out.writeByte(DATA); out.writeLong(d.epoch()); out.writeLong(d.seq());
                    out.writeByte(d.delivery().ordinal()); writeBytes(out, d.payload()); writeSites(out, d.sites());
                    out.writeLong(d.heldThrough());
                }
                case Proto.Order o -> {
                    out.writeByte(ORDER); out.writeLong(o.epoch()); out.writeLong(o.firstSlot());
                    out.writeInt(o.ids().size());
                    for (MsgId id : o.ids()) writeId(out, id);
                    out.writeLong(o.heldThrough());
                }
                case Proto.Ack a -> {
                    out.writeByte(ACK); out.writeLong(a.epoch()); out.writeLong(a.heldThrough()); writeVector(out, a.received());
                    out.writeLong(a.stamp()); writeVector(out, a.echo());
                }
                case Proto.FlushState s -> {
                    out.writeByte(FLUSH_STATE); out.writeLong(s.viewId()); writeEpoch(out, s.installedEpoch());
                    writeStrings(out, s.installedMembers()); out.writeBoolean(s.mayBootstrap());
                    writeEpoch(out, s.acceptedEpoch()); writeEpoch(out, s.acceptedBase()); writeStrings(out, s.acceptedMembers());
                    out.writeLong(s.nextDeliver()); out.writeLong(s.gsn());
                    writeAssignments(out, s.assignments()); writeHeld(out, s.held()); writeVector(out, s.received());
                    writeStrings(out, s.sites()); out.writeLong(s.sitesGsn());
                }
                case Proto.Proposal pr -> {
                    out.writeByte(PROPOSAL); out.writeLong(pr.viewId()); writeEpoch(out, pr.newEpoch());
                    writeEpoch(out, pr.baseEpoch()); writeStrings(out, pr.members());
                    out.writeLong(pr.fromSlot()); out.writeLong(pr.startSlot()); out.writeLong(pr.gsnAtStart());
                    writeAssignments(out, pr.assignments()); writeHeld(out, pr.data()); writeHeld(out, pr.reliable());
                    writeStrings(out, pr.sites()); out.writeLong(pr.sitesGsn());
                }
                case Proto.ProposalAck a -> { out.writeByte(PROPOSAL_ACK); out.writeLong(a.viewId()); }
                case Proto.Commit c -> { out.writeByte(COMMIT); out.writeLong(c.viewId()); }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bos.toByteArray();
    }

    public static Proto decode(byte[] buf, int off, int len) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(buf, off, len))) {
            byte type = in.readByte();
            return switch (type) {
                case DATA -> new Proto.Data(in.readLong(), in.readLong(), DELIVERIES[in.readByte()], readBytes(in), readSites(in), in.readLong());
                case ORDER -> {
                    long epoch = in.readLong(), first = in.readLong();
                    int n = in.readInt();
                    List<MsgId> ids = new ArrayList<>(n);
                    for (int i = 0; i < n; i++) ids.add(readId(in));
                    yield new Proto.Order(epoch, first, ids, in.readLong());
                }
                case ACK -> new Proto.Ack(in.readLong(), in.readLong(), readVector(in), in.readLong(), readVector(in));
                case FLUSH_STATE -> new Proto.FlushState(in.readLong(), readEpoch(in), readStrings(in), in.readBoolean(),
                        readEpoch(in), readEpoch(in), readStrings(in), in.readLong(),
                        in.readLong(), readAssignments(in), readHeld(in), readVector(in), readStrings(in), in.readLong());
                case PROPOSAL -> {
                    long viewId = in.readLong();
                    Epoch newEpoch = readEpoch(in), baseEpoch = readEpoch(in);
                    List<String> members = readStrings(in);
                    yield new Proto.Proposal(viewId, newEpoch, baseEpoch, members, in.readLong(), in.readLong(),
                            in.readLong(), readAssignments(in), readHeld(in), readHeld(in), readStrings(in), in.readLong());
                }
                case PROPOSAL_ACK -> new Proto.ProposalAck(in.readLong());
                case COMMIT -> new Proto.Commit(in.readLong());
                case BUNDLE -> throw new IllegalArgumentException("a bundle of total-order messages where one message was expected");
                default -> throw new IllegalArgumentException("unknown total-order message type " + type);
            };
        } catch (IOException e) {
            throw new UncheckedIOException("corrupt total-order message", e);
        }
    }

    /**
     * One frame carrying several encoded messages ({@link #encode} each), in this order; read back with
     * {@link #decodeAll}. A single message needs no bundle: its own encoding is a frame already.
     */
    public static byte[] bundle(List<byte[]> encoded) {
        int size = 1 + 4;
        for (byte[] e : encoded) size += 4 + e.length;
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(size);
        b.put(BUNDLE).putInt(encoded.size());
        for (byte[] e : encoded) b.putInt(e.length).put(e);
        return b.array();
    }

    /** The messages of one frame: a bundle's, in order, or the single message it is. */
    public static List<Proto> decodeAll(byte[] buf, int off, int len) {
        if (len < 1 || buf[off] != BUNDLE) return List.of(decode(buf, off, len));
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(buf, off, len);
        try {
            b.get();
            int n = b.getInt();
            if (n < 0 || n > len) throw new IllegalArgumentException("corrupt total-order bundle: " + n + " messages in " + len + " bytes");
            List<Proto> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int l = b.getInt();
                if (l < 1 || l > b.remaining()) throw new IllegalArgumentException("corrupt total-order bundle: a message of " + l + " bytes, " + b.remaining() + " left");
                out.add(decode(buf, b.position(), l));
                b.position(b.position() + l);
            }
            if (b.hasRemaining()) throw new IllegalArgumentException("corrupt total-order bundle: " + b.remaining() + " bytes after " + n + " messages");
            return out;
        } catch (java.nio.BufferUnderflowException e) {
            throw new IllegalArgumentException("corrupt total-order bundle: truncated", e);
        }
    }

    private static void writeEpoch(DataOutputStream out, Epoch e) throws IOException {
        out.writeLong(e.number()); out.writeLong(e.viewId()); out.writeUTF(e.leader());
    }
    private static Epoch readEpoch(DataInputStream in) throws IOException {
        return new Epoch(in.readLong(), in.readLong(), in.readUTF());
    }
    private static void writeStrings(DataOutputStream out, List<String> ss) throws IOException {
        out.writeInt(ss.size());
        for (String x : ss) out.writeUTF(x);
    }
    private static List<String> readStrings(DataInputStream in) throws IOException {
        int n = in.readInt();
        List<String> ss = new ArrayList<>(n);
        for (int i = 0; i < n; i++) ss.add(in.readUTF());
        return ss;
    }
    /** A configuration change's site set, or null (most messages): one byte then. */
    private static void writeSites(DataOutputStream out, List<String> sites) throws IOException {
        out.writeBoolean(sites != null);
        if (sites != null) writeStrings(out, sites);
    }
    private static List<String> readSites(DataInputStream in) throws IOException { return in.readBoolean() ? List.copyOf(readStrings(in)) : null; }
    private static void writeBytes(DataOutputStream out, byte[] b) throws IOException { out.writeInt(b.length); out.write(b); }
    private static byte[] readBytes(DataInputStream in) throws IOException { byte[] b = new byte[in.readInt()]; in.readFully(b); return b; }
    private static void writeId(DataOutputStream out, MsgId id) throws IOException {
        out.writeBoolean(id != null);
        if (id != null) { out.writeUTF(id.sender()); out.writeLong(id.seq()); }
    }
    private static MsgId readId(DataInputStream in) throws IOException { return in.readBoolean() ? new MsgId(in.readUTF(), in.readLong()) : null; }

    private static void writeVector(DataOutputStream out, Map<String, Long> v) throws IOException {
        out.writeInt(v.size());
        for (var e : v.entrySet()) { out.writeUTF(e.getKey()); out.writeLong(e.getValue()); }
    }
    private static Map<String, Long> readVector(DataInputStream in) throws IOException {
        int n = in.readInt();
        Map<String, Long> v = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) v.put(in.readUTF(), in.readLong());
        return v;
    }
    private static void writeAssignments(DataOutputStream out, List<Proto.Assignment> as) throws IOException {
        out.writeInt(as.size());
        for (var a : as) { out.writeLong(a.slot()); writeId(out, a.id()); out.writeLong(a.level()); }
    }
    private static List<Proto.Assignment> readAssignments(DataInputStream in) throws IOException {
        int n = in.readInt();
        List<Proto.Assignment> as = new ArrayList<>(n);
        for (int i = 0; i < n; i++) as.add(new Proto.Assignment(in.readLong(), readId(in), in.readLong()));
        return as;
    }
    private static void writeHeld(DataOutputStream out, List<Proto.Held> hs) throws IOException {
        out.writeInt(hs.size());
        for (var h : hs) { writeId(out, h.id()); out.writeByte(h.delivery().ordinal()); writeBytes(out, h.payload()); writeSites(out, h.sites()); }
    }
    private static List<Proto.Held> readHeld(DataInputStream in) throws IOException {
        int n = in.readInt();
        List<Proto.Held> hs = new ArrayList<>(n);
        for (int i = 0; i < n; i++) hs.add(new Proto.Held(readId(in), DELIVERIES[in.readByte()], readBytes(in), readSites(in)));
        return hs;
    }
}
