package org.wanrep.history;

import org.wanrep.checker.MicroOp;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;

/**
 * The list-append workload's keys and values, shared by every client: a window of {@code width} active keys, each
 * retired for a fresh one after a few dozen appends (as Elle's generator does) so lists, reads and the history stay
 * short while the key space stays small; every appended value is unique across the run.
 */
final class KeySpace {
    private final long[] active;
    private final int[] appends;
    private final int maxAppendsPerKey;
    private long nextKey;
    private long nextValue = 1;
    private final TreeSet<Long> used = new TreeSet<>();

    KeySpace(int width, int maxAppendsPerKey) {
        active = new long[width];
        appends = new int[width];
        this.maxAppendsPerKey = maxAppendsPerKey;
        for (int i = 0; i < width; i++) active[i] = nextKey++;
    }

    /** A transaction of 1-4 micro-ops, each an append (of a fresh value) or a read of an active key. */
    synchronized List<MicroOp> next(Random rnd) {
        int n = 1 + rnd.nextInt(4);
        List<MicroOp> ops = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int slot = rnd.nextInt(active.length);
            long k = active[slot];
            used.add(k);
            if (rnd.nextBoolean()) {
                ops.add(MicroOp.append(k, nextValue++));
                if (++appends[slot] >= maxAppendsPerKey) {
                    active[slot] = nextKey++;
                    appends[slot] = 0;
                }
            } else {
                ops.add(MicroOp.read(k));
            }
        }
        return ops;
    }

    /** Every key some transaction touched. */
    synchronized List<Long> used() { return List.copyOf(used); }
}
