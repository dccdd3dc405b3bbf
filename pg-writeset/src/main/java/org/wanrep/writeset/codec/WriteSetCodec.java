package org.wanrep.writeset.codec;

import org.wanrep.writeset.ColumnValue;
import org.wanrep.writeset.RowChange;
import org.wanrep.writeset.WriteSet;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Compact binary form of a {@link WriteSet} for the group channel.
 * <pre>
 * byte   version (1)
 * str    tag
 * varint n; n x str          dictionary: schema, table, column and type names, each once
 * varint rows
 *   byte action (0 I, 1 U, 2 D); varint schema#, table#
 *   varint nkey;    nkey    x (varint name#, varint type#, value)
 *   varint nvalues; nvalues x (varint name#, varint type#, value)
 * value: byte 0 = NULL | byte 1, str
 * str:   varint byte length, UTF-8 bytes (no 64 KiB limit, unlike writeUTF)
 * </pre>
 * Absent (TOAST-unchanged) columns are simply not listed, so they stay distinct from NULL.
 */
public final class WriteSetCodec {
    private static final int VERSION = 1;

    private WriteSetCodec() {}

    public static byte[] encode(WriteSet ws) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(256 + (int) Math.min(Integer.MAX_VALUE / 2, ws.approximateBytes()));
        try {
            encode(ws, bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);   // not possible on a byte array
        }
        return bytes.toByteArray();
    }

    public static void encode(WriteSet ws, OutputStream out) throws IOException {
        Map<String, Integer> dict = new HashMap<>();
        List<String> names = new ArrayList<>();
        for (RowChange r : ws.rows()) {
            intern(r.schema(), dict, names);
            intern(r.table(), dict, names);
            for (ColumnValue c : r.key()) { intern(c.name(), dict, names); intern(c.type(), dict, names); }
            for (ColumnValue c : r.values()) { intern(c.name(), dict, names); intern(c.type(), dict, names); }
        }
        DataOutputStream o = new DataOutputStream(out);
        o.writeByte(VERSION);
        writeString(o, ws.tag());
        writeVarint(o, names.size());
        for (String n : names) writeString(o, n);
        writeVarint(o, ws.rows().size());
        for (RowChange r : ws.rows()) {
            o.writeByte(r.action().ordinal());
            writeVarint(o, dict.get(r.schema()));
            writeVarint(o, dict.get(r.table()));
            writeColumns(o, r.key(), dict);
            writeColumns(o, r.values(), dict);
        }
        o.flush();
    }

    public static WriteSet decode(byte[] data) {
        try {
            return decode(new java.io.ByteArrayInputStream(data));
        } catch (IOException e) {
            throw new IllegalArgumentException("corrupt write set: " + e.getMessage(), e);
        }
    }

    public static WriteSet decode(InputStream in) throws IOException {
        DataInputStream i = new DataInputStream(in);
        int version = i.readUnsignedByte();
        if (version != VERSION) throw new IOException("unknown write set encoding version " + version);
        String tag = readString(i);
        int n = readCount(i);
        String[] names = new String[n];
        for (int k = 0; k < n; k++) names[k] = readString(i);
        int rows = readCount(i);
        RowChange.Action[] actions = RowChange.Action.values();
        List<RowChange> out = new ArrayList<>(Math.min(rows, 1 << 16));
        for (int r = 0; r < rows; r++) {
            int a = i.readUnsignedByte();
            if (a >= actions.length) throw new IOException("bad action " + a);
            String schema = name(names, readVarint(i));
            String table = name(names, readVarint(i));
            List<ColumnValue> key = readColumns(i, names);
            List<ColumnValue> values = readColumns(i, names);
            out.add(new RowChange(schema, table, actions[a], key, values));
        }
        return new WriteSet(tag, out);
    }

    private static void intern(String s, Map<String, Integer> dict, List<String> names) {
        if (dict.putIfAbsent(s, names.size()) == null) names.add(s);
    }

    private static void writeColumns(DataOutputStream o, List<ColumnValue> cols, Map<String, Integer> dict) throws IOException {
        writeVarint(o, cols.size());
        for (ColumnValue c : cols) {
            writeVarint(o, dict.get(c.name()));
            writeVarint(o, dict.get(c.type()));
            if (c.value() == null) {
                o.writeByte(0);
            } else {
                o.writeByte(1);
                writeString(o, c.value());
            }
        }
    }

    private static List<ColumnValue> readColumns(DataInputStream i, String[] names) throws IOException {
        int n = readCount(i);
        List<ColumnValue> cols = new ArrayList<>(Math.min(n, 1024));
        for (int k = 0; k < n; k++) {
            String name = name(names, readVarint(i));
            String type = name(names, readVarint(i));
            int flag = i.readUnsignedByte();
            String value = switch (flag) {
                case 0 -> null;
                case 1 -> readString(i);
                default -> throw new IOException("bad value flag " + flag);
            };
            cols.add(new ColumnValue(name, type, value));
        }
        return cols;
    }

    private static String name(String[] names, int idx) throws IOException {
        if (idx < 0 || idx >= names.length) throw new IOException("bad name index " + idx);
        return names[idx];
    }

    private static void writeString(DataOutputStream o, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        writeVarint(o, b.length);
        o.write(b);
    }

    private static String readString(DataInputStream i) throws IOException {
        int len = readCount(i);
        byte[] b = new byte[len];
        i.readFully(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    private static void writeVarint(DataOutputStream o, int v) throws IOException {
        while ((v & ~0x7F) != 0) {
            o.writeByte((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        o.writeByte(v);
    }

    private static int readVarint(DataInputStream i) throws IOException {
        int v = 0;
        for (int shift = 0; shift < 35; shift += 7) {
            int b = i.read();
            if (b < 0) throw new EOFException();
            v |= (b & 0x7F) << shift;
            if ((b & 0x80) == 0) return v;
        }
        throw new IOException("varint too long");
    }

    /** A length or count: never negative, so corrupt input fails here rather than in an allocation. */
    private static int readCount(DataInputStream i) throws IOException {
        int n = readVarint(i);
        if (n < 0) throw new IOException("bad length " + n);
        return n;
    }
}
