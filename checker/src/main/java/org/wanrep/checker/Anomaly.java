package org.wanrep.checker;

import java.util.List;

/**
 * One anomaly the checker found. {@code type} is one of G0, G1a, G1b, G1c, G-single, G2 (a dependency cycle's class,
 * with "-process" or "-realtime" appended when the cycle needs a session-order or real-time edge), lost,
 * incompatible-order, duplicate-elements, garbage-read, duplicate-append. {@code txns} are the transaction ids
 * involved (for a cycle, in cycle order), {@code steps} explain the cycle's edges (or the evidence) in words and
 * {@code transactions} show those transactions' micro-ops.
 */
public record Anomaly(String type, List<Long> txns, String description, List<String> steps, List<String> transactions) {
    public Anomaly {
        txns = List.copyOf(txns);
        steps = List.copyOf(steps);
        transactions = List.copyOf(transactions);
    }

    /** A cycle's class: the base type without a "-process"/"-realtime" suffix. */
    public String baseType() {
        return type.replace("-process", "").replace("-realtime", "");
    }
}
