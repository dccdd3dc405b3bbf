package org.wanrep.wire;

/** Builders for the messages the proxy itself sends, to clients (backend messages) or to PostgreSQL. */
public final class Messages {
    private Messages() {}

    public static final WireMessage SYNC = WireMessage.of('S', new byte[0]);
    public static final WireMessage FLUSH = WireMessage.of('H', new byte[0]);
    public static final WireMessage TERMINATE = WireMessage.of('X', new byte[0]);
    public static final WireMessage AUTH_OK = new PayloadWriter().int32(0).message('R');
    public static final WireMessage EMPTY_QUERY = WireMessage.of('I', new byte[0]);

    public static WireMessage readyForQuery(char status) { return new PayloadWriter().int8(status).message('Z'); }

    /** The transaction status byte of a ReadyForQuery: I idle, T in a block, E failed block. */
    public static char status(WireMessage readyForQuery) {
        if (readyForQuery.payload().length != 1) throw new ProtocolException("invalid ReadyForQuery message");
        return (char) readyForQuery.payload()[0];
    }

    public static WireMessage commandComplete(String tag) { return new PayloadWriter().cstring(tag).message('C'); }

    public static String commandTag(WireMessage commandComplete) { return new PayloadReader(commandComplete.payload()).cstring(); }

    /** A RowDescription of text columns. */
    public static WireMessage rowDescription(java.util.List<String> columns) {
        PayloadWriter w = new PayloadWriter().int16(columns.size());
        for (String c : columns) w.cstring(c).int32(0).int16(0).int32(25).int16(-1).int32(-1).int16(0);
        return w.message('T');
    }

    /** A DataRow of text values (null for SQL NULL). */
    public static WireMessage dataRow(java.util.List<String> values) {
        PayloadWriter w = new PayloadWriter().int16(values.size());
        for (String v : values) {
            if (v == null) w.int32(-1);
            else {
                byte[] b = v.getBytes(java.nio.charset.StandardCharsets.UTF_8);
                w.int32(b.length).bytes(b);
            }
        }
        return w.message('D');
    }

    /** The values of a DataRow in text format (null for SQL NULL). */
    public static java.util.List<String> dataRowValues(WireMessage dataRow) {
        PayloadReader r = new PayloadReader(dataRow.payload());
        int n = r.int16();
        java.util.List<String> out = new java.util.ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int len = r.int32();
            out.add(len < 0 ? null : new String(r.bytes(len), java.nio.charset.StandardCharsets.UTF_8));
        }
        return out;
    }

    public static WireMessage parameterStatus(String name, String value) { return new PayloadWriter().cstring(name).cstring(value).message('S'); }

    public static WireMessage backendKeyData(int pid, int key) { return new PayloadWriter().int32(pid).int32(key).message('K'); }

    public static WireMessage authSasl(String mechanism) { return new PayloadWriter().int32(10).cstring(mechanism).int8(0).message('R'); }

    public static WireMessage authSaslContinue(byte[] data) { return new PayloadWriter().int32(11).bytes(data).message('R'); }

    public static WireMessage authSaslFinal(byte[] data) { return new PayloadWriter().int32(12).bytes(data).message('R'); }

    public static WireMessage authCleartext() { return new PayloadWriter().int32(3).message('R'); }

    public static WireMessage closeStatement(String name) { return new PayloadWriter().int8('S').cstring(name).message('C'); }

    public static WireMessage copyFail(String why) { return new PayloadWriter().cstring(why).message('f'); }

    /** What a Close or Describe message names: a prepared statement ('S') or a portal ('P'). */
    public record Target(char kind, String name) {
        public boolean isStatement() { return kind == 'S'; }
    }

    /** The target of a Close message; a ProtocolException (08P01) if the message is empty, truncated or malformed. */
    public static Target closeTarget(WireMessage close) { return target(close, "Close"); }

    /** The target of a Describe message; a ProtocolException (08P01) if the message is empty, truncated or malformed. */
    public static Target describeTarget(WireMessage describe) { return target(describe, "Describe"); }

    private static Target target(WireMessage m, String what) {
        PayloadReader r = new PayloadReader(m.payload());
        if (r.remaining() == 0) throw new ProtocolException("invalid " + what + " message: no data");
        char kind = (char) r.int8();
        if (kind != 'S' && kind != 'P') throw new ProtocolException("invalid " + what + " message subtype " + (int) kind);
        String name;
        try {
            name = r.cstring();
        } catch (ProtocolException e) {
            throw new ProtocolException("invalid " + what + " message: truncated name");
        }
        if (r.remaining() != 0) throw new ProtocolException("invalid " + what + " message format");
        return new Target(kind, name);
    }

    /** The statement name a Parse message defines. */
    public static String parseName(WireMessage parse) { return new PayloadReader(parse.payload()).cstring(); }

    /** The SQL text of a Parse message. */
    public static String parseQuery(WireMessage parse) {
        PayloadReader r = new PayloadReader(parse.payload());
        r.cstring();
        return r.cstring();
    }

    /**
     * An ErrorResponse whose position field ('P', characters from the start of the query string, 1-based) counts
     * {@code by} characters fewer: the error of a text that ran behind a prefix of ours. Every other field keeps its
     * bytes (they are in the session's client encoding); a position that would not be past the prefix stays.
     */
    public static WireMessage withErrorPositionBack(WireMessage error, int by) {
        byte[] p = error.payload();
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(p.length);
        int i = 0;
        while (i < p.length && p[i] != 0) {
            byte code = p[i];
            int end = i + 1;
            while (end < p.length && p[end] != 0) end++;
            out.write(code);
            String value = code == 'P' ? new String(p, i + 1, end - i - 1, java.nio.charset.StandardCharsets.US_ASCII) : null;
            if (value != null && value.matches("[0-9]{1,9}") && Integer.parseInt(value) > by)
                out.writeBytes(Integer.toString(Integer.parseInt(value) - by).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            else out.write(p, i + 1, end - i - 1);
            out.write(0);
            i = end + 1;
        }
        out.write(0);
        return WireMessage.of(error.kind(), out.toByteArray());
    }

    /** A Parse message with the same name and parameter types but another query text. */
    public static WireMessage withParseQuery(WireMessage parse, String sql) {
        PayloadReader r = new PayloadReader(parse.payload());
        String name = r.cstring();
        r.cstring();
        return new PayloadWriter().cstring(name).cstring(sql).bytes(r.rest()).message('P');
    }

    /** The parameter type OIDs a Parse message declares (0: left to the server to infer). */
    public static int[] parseParameterTypes(WireMessage parse) {
        PayloadReader r = new PayloadReader(parse.payload());
        r.cstring();
        r.cstring();
        int[] types = new int[r.int16() & 0xffff];
        for (int i = 0; i < types.length; i++) types[i] = r.int32();
        return types;
    }

    /** A Bind message's parameter format codes (none: all text; one: for all) and values (null: SQL NULL). */
    public record BoundValues(short[] formats, java.util.List<byte[]> values) {}

    public static BoundValues bindValues(WireMessage bind) {
        PayloadReader r = new PayloadReader(bind.payload());
        r.cstring();
        r.cstring();
        short[] formats = new short[r.int16() & 0xffff];
        for (int i = 0; i < formats.length; i++) formats[i] = (short) r.int16();
        int n = r.int16() & 0xffff;
        java.util.List<byte[]> values = new java.util.ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int len = r.int32();
            values.add(len < 0 ? null : r.bytes(len));
        }
        return new BoundValues(formats, values);
    }

    /** The portal and statement names of a Bind message. */
    public static String[] bindNames(WireMessage bind) {
        PayloadReader r = new PayloadReader(bind.payload());
        String portal = r.cstring();
        return new String[] {portal, r.cstring()};
    }
}
