package org.wanrep.wire;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/** Builds a message payload field by field. */
public final class PayloadWriter {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream(64);

    public PayloadWriter int8(int v) { out.write(v); return this; }

    public PayloadWriter int16(int v) { out.write(v >>> 8); out.write(v); return this; }

    public PayloadWriter int32(int v) {
        out.write(v >>> 24); out.write(v >>> 16); out.write(v >>> 8); out.write(v);
        return this;
    }

    public PayloadWriter cstring(String s) {
        out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
        out.write(0);
        return this;
    }

    public PayloadWriter bytes(byte[] b) { out.writeBytes(b); return this; }

    public byte[] bytes() { return out.toByteArray(); }

    public WireMessage message(char type) { return WireMessage.of(type, bytes()); }
}
