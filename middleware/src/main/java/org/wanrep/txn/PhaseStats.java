package org.wanrep.txn;

import org.HdrHistogram.Histogram;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The study's response-time breakdown for update transactions that originated at this site:
 * delivery (submit to final delivery), lock wait, write-set wait (another site executed it: from
 * grant or final delivery to the arrival of its write set), execution (or applying the write set),
 * commit (including the wait for the final delivery under opt-safe) and the total. Clients read it with {@code SHOW wanrep.phases}.
 */
public final class PhaseStats {
    public static final List<String> PHASES = List.of("delivery", "optimistic_delivery", "lock_wait", "writeset_wait", "execution", "commit", "total");

    public record Summary(String phase, long count, double meanMs, double p50Ms, double p99Ms) {}

    private final Map<String, Histogram> hs = new LinkedHashMap<>();

    public PhaseStats() { reset(); }

    synchronized void record(Txn.Phases p) {
        if (p.submitted == 0 || p.committed == 0) return;
        long delivered = p.optDelivered != 0 ? Math.min(p.optDelivered, p.finalDelivered == 0 ? Long.MAX_VALUE : p.finalDelivered) : p.finalDelivered;
        add("delivery", p.finalDelivered - p.submitted);
        if (p.optDelivered != 0) add("optimistic_delivery", p.optDelivered - p.submitted);
        if (p.granted != 0) add("lock_wait", p.granted - delivered);
        long ready = Math.max(p.granted, p.finalDelivered);
        if (p.writeSetArrived != 0 && p.granted != 0) {
            add("writeset_wait", p.writeSetArrived - ready);
            if (p.executed != 0) add("execution", p.executed - Math.max(ready, p.writeSetArrived));
        } else if (p.executed != 0 && p.granted != 0) add("execution", p.executed - p.granted);
        if (p.executed != 0) add("commit", p.committed - p.executed);
        add("total", p.committed - p.submitted);
    }

    private void add(String phase, long nanos) {
        hs.get(phase).recordValue(Math.max(0, nanos / 1000));
    }

    public synchronized List<Summary> summaries() {
        return PHASES.stream().map(ph -> {
            Histogram h = hs.get(ph);
            return new Summary(ph, h.getTotalCount(), h.getTotalCount() == 0 ? 0 : h.getMean() / 1000.0,
                    h.getValueAtPercentile(50) / 1000.0, h.getValueAtPercentile(99) / 1000.0);
        }).toList();
    }

    public synchronized void reset() {
        for (String ph : PHASES) hs.put(ph, new Histogram(3_600_000_000L, 3));
    }
}
