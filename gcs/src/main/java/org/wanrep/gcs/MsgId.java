package org.wanrep.gcs;

/** Identity of a multicast: the sending member and its per-member sequence number (from 1). */
public record MsgId(String sender, long seq) implements Comparable<MsgId> {
    @Override public int compareTo(MsgId o) {
        int c = sender.compareTo(o.sender);
        return c != 0 ? c : Long.compare(seq, o.seq);
    }
    @Override public String toString() { return sender + ":" + seq; }
}
