package org.wanrep.wire;

import java.nio.charset.StandardCharsets;

/**
 * One PostgreSQL protocol v3 message: type byte and payload (without the length word). Frontend
 * and backend messages alike; a request multicast to the group carries a list of these.
 */
public record WireMessage(byte type, byte[] payload) {
    public char kind() { return (char) type; }

    public static WireMessage of(char type, byte[] payload) { return new WireMessage((byte) type, payload); }

    /** A simple-protocol Query message for {@code sql}. */
    public static WireMessage query(String sql) {
        return of('Q', new PayloadWriter().cstring(sql).bytes());
    }

    /** The SQL text of a Query message. */
    public String queryText() {
        if (type != 'Q') throw new IllegalStateException("not a Query message: " + kind());
        return new PayloadReader(payload).cstring();
    }

    @Override public String toString() {
        return kind() + "[" + payload.length + "]" + (type == 'Q' ? " " + new String(payload, StandardCharsets.UTF_8).trim() : "");
    }
}
