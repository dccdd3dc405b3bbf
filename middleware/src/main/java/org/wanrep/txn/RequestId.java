package org.wanrep.txn;

/** A transaction request's identity: the origin site and a per-site counter. */
public record RequestId(String site, long seq) {
    @Override public String toString() { return site + "#" + seq; }

    /** The id {@link #toString} wrote. */
    public static RequestId parse(String s) {
        int i = s.lastIndexOf('#');
        if (i <= 0) throw new IllegalArgumentException("not a request id: " + s);
        return new RequestId(s.substring(0, i), Long.parseLong(s.substring(i + 1)));
    }
}
