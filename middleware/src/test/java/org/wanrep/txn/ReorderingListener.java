package org.wanrep.txn;

import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.GcsListener;
import org.wanrep.gcs.GcsMessage;
import org.wanrep.gcs.GcsView;
import org.wanrep.gcs.MsgId;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * Forces optimistic deliveries out of the final order, as a WAN with different paths would: holds
 * them back and releases them shuffled, always before their final delivery. Called on the single
 * delivery thread, so it needs no locking.
 */
public final class ReorderingListener implements GcsListener {
    private final GcsListener inner;
    private final Random random;
    private final List<GcsMessage> held = new ArrayList<>();
    public int reordered;

    public ReorderingListener(GcsListener inner, long seed) { this(inner, new Random(seed)); }

    public ReorderingListener(GcsListener inner, Random random) {
        this.inner = inner;
        this.random = random;
    }

    @Override public void optimistic(GcsMessage m) {
        held.add(m);
        if (held.size() >= 2 + random.nextInt(3)) release();
    }

    @Override public void ordered(GcsMessage m, long gsn) {
        if (held.stream().anyMatch(h -> h.id().equals(m.id()))) release();
        inner.ordered(m, gsn);
    }

    private void release() {
        List<GcsMessage> batch = new ArrayList<>(held);
        held.clear();
        Collections.shuffle(batch, random);
        reordered += batch.size() > 1 ? 1 : 0;
        for (GcsMessage h : batch) inner.optimistic(h);
    }

    @Override public void reliable(GcsMessage m) { inner.reliable(m); }

    @Override public void viewChanged(GcsView v) {
        release();
        inner.viewChanged(v);
    }

    @Override public void undeliverable(MsgId id, Delivery d, String reason) { inner.undeliverable(id, d, reason); }
}
