package org.wanrep.gcs.wan;

import org.wanrep.gcs.Delivery;

/**
 * The analytical lower bound on delivery latency with a fixed sequencer q (DESIGN.md section 3):
 * optimistic at r: d(s,r); agreed at r: A(r) = max(d(s,r), d(s,q) + d(q,r));
 * safe at r: max over members m of (A(m) + d(m,r)).
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
        double worst = 0;
        for (int k = 0; k < m.sites().size(); k++) worst = Math.max(worst, agreed(s, k) + m.delay(k, r));
        return worst;
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
