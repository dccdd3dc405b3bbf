package org.wanrep.wire;

import java.nio.charset.StandardCharsets;

/** Reads the fields of a message payload in order (network byte order, NUL-terminated strings). */
public final class PayloadReader {
    private final byte[] b;
    private int pos;

    public PayloadReader(byte[] payload) { this.b = payload; }

    public int remaining() { return b.length - pos; }

    public byte int8() { need(1); return b[pos++]; }

    public int int16() {
        need(2);
        int v = ((b[pos] & 0xff) << 8) | (b[pos + 1] & 0xff);
        pos += 2;
        return (short) v;
    }

    public int int32() {
        need(4);
        int v = ((b[pos] & 0xff) << 24) | ((b[pos + 1] & 0xff) << 16) | ((b[pos + 2] & 0xff) << 8) | (b[pos + 3] & 0xff);
        pos += 4;
        return v;
    }

    public String cstring() {
        int end = pos;
        while (end < b.length && b[end] != 0) end++;
        if (end == b.length) throw new ProtocolException("unterminated string in message");
        String s = new String(b, pos, end - pos, StandardCharsets.UTF_8);
        pos = end + 1;
        return s;
    }

    public byte[] bytes(int n) {
        need(n);
        byte[] r = java.util.Arrays.copyOfRange(b, pos, pos + n);
        pos += n;
        return r;
    }

    public byte[] rest() { return bytes(remaining()); }

    private void need(int n) {
        if (n < 0 || pos + n > b.length) throw new ProtocolException("message too short");
    }
}
