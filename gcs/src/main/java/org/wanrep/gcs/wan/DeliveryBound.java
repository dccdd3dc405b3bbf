package org.wanrep.gcs.wan;

import org.wanrep.gcs.Delivery;

/**
 * The analytical lower bound on delivery latency with a fixed sequencer q (DESIGN.md section 3):
 * optimistic at r: d(s,r); agreed at r: A(r) = max(d(s,r), d(s,q) + d(q,r));
 * safe at r (uniform once a majority holds it, see TotalOrderCore): r must hold it, A(r), and a majority
 * of the n members must have told r so: the (n/2 + 1)-th smallest of A(r) and A(m) + d(m,r) over the
 * others m. (DESIGN.md's formula, the max over every member, is what waiting for all of them costs.)
 */
public final class DeliveryBound {
    private final LatencyMatrix m;
    private final int q;

    public DeliveryBound(LatencyMatrix matrix, String sequencerSite) {
        this.m = matrix;
        this.q = matrix.indexOf(sequencerSite);
    }

    public double optimistic(int s, int r) { return m.delay(s, r); }

    public double agreed(int s, int r) { return Math.max(m.delay(s, r), m.delay(s, q) + m.delay(q, r)); }

    public double safe(int s, int r) {
        int n = m.sites().size();
        double[] known = new double[n];
        for (int k = 0; k < n; k++) known[k] = k == r ? agreed(s, r) : agreed(s, k) + m.delay(k, r);
        java.util.Arrays.sort(known);
        return Math.max(agreed(s, r), known[n / 2]);
    }

    /** Final delivery bound at r for a message of s. */
    public double fin(Delivery d, int s, int r) {
        return switch (d) {
            case RELIABLE -> m.delay(s, r);
            case AGREED -> agreed(s, r);
            case SAFE, OPT_SAFE -> safe(s, r);
        };
    }

    /** Final delivery at the last member. */
    public double finAll(Delivery d, int s) {
        double w = 0;
        for (int r = 0; r < m.sites().size(); r++) w = Math.max(w, fin(d, s, r));
        return w;
    }
}
