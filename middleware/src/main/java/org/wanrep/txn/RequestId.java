package org.wanrep.txn;

/** A transaction request's identity: the origin site and a per-site counter. */
public record RequestId(String site, long seq) {
    @Override public String toString() { return site + "#" + seq; }
}
