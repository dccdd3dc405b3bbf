package org.wanrep.gcs.core;

/**
 * Identity of a primary epoch: the flush plan that created it. Numbers alone are not enough: a plan
 * that was proposed but never committed (its view broke up) can share its number with the plan a
 * later view committed, and a member holding the former must not count as continuing the latter.
 */
public record Epoch(long number, long viewId, String leader) implements Comparable<Epoch> {
    public static final Epoch NONE = new Epoch(0, -1, "");

    @Override public int compareTo(Epoch o) {
        if (number != o.number) return Long.compare(number, o.number);
        if (viewId != o.viewId) return Long.compare(viewId, o.viewId);
        return leader.compareTo(o.leader);
    }

    public static Epoch max(Epoch a, Epoch b) { return a.compareTo(b) >= 0 ? a : b; }

    @Override public String toString() { return number == 0 ? "none" : number + "@" + viewId + "/" + leader; }
}
