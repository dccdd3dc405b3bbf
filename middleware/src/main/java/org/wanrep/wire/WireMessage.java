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

    /**
     * A Query message whose text is {@code prefix}, then this Query's text as its bytes are (in whatever client
     * encoding its session has), then {@code suffix}; both ASCII, which every client encoding spells alike.
     */
    public WireMessage queryAround(String prefix, String suffix) {
        if (type != 'Q') throw new IllegalStateException("not a Query message: " + kind());
        byte[] pre = prefix.getBytes(StandardCharsets.US_ASCII), post = suffix.getBytes(StandardCharsets.US_ASCII);
        int text = payload.length - 1;   // without the text's terminating zero
        byte[] p = new byte[pre.length + text + post.length + 1];
        System.arraycopy(pre, 0, p, 0, pre.length);
        System.arraycopy(payload, 0, p, pre.length, text);
        System.arraycopy(post, 0, p, pre.length + text, post.length);
        return of('Q', p);
    }

    /**
     * One Query message of the texts of {@code queries} (Query messages) in order, each followed by {@code separator}
     * (ASCII) but the last: their bytes as they are, in whatever client encoding their session has.
     */
    public static WireMessage joinedQueries(java.util.List<WireMessage> queries, String separator) {
        byte[] sep = separator.getBytes(StandardCharsets.US_ASCII);
        int n = 1;
        for (WireMessage q : queries) {
            if (q.type != 'Q') throw new IllegalStateException("not a Query message: " + q.kind());
            n += q.payload.length - 1;
        }
        n += sep.length * Math.max(0, queries.size() - 1);
        byte[] p = new byte[n];
        int at = 0;
        for (int i = 0; i < queries.size(); i++) {
            if (i > 0) {
                System.arraycopy(sep, 0, p, at, sep.length);
                at += sep.length;
            }
            byte[] q = queries.get(i).payload;
            System.arraycopy(q, 0, p, at, q.length - 1);
            at += q.length - 1;
        }
        return of('Q', p);
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
