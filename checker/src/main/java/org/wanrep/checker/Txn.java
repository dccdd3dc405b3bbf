package org.wanrep.checker;

import java.util.List;

/**
 * A transaction with its outcome, paired from its invocation and completion events. An invocation without a
 * completion is {@link OpType#INFO}. For ok transactions {@code ops} holds the completion's micro-ops (reads with
 * their lists); for fail and info ones the invocation's (appends that may or may not have happened, reads unknown).
 * {@code invokeSeq}/{@code completeSeq} are the positions of the events in the history (completeSeq is
 * {@link Long#MAX_VALUE} when the transaction never completed).
 */
public record Txn(long id, int process, String node, OpType outcome, List<MicroOp> ops, long invokeTime, long completeTime,
                  long invokeSeq, long completeSeq, String error) {

    public boolean ok() { return outcome == OpType.OK; }

    /** Ok or unknown: it may have committed, so it is a node of the dependency graph. */
    public boolean maybeCommitted() { return outcome == OpType.OK || outcome == OpType.INFO; }

    @Override public String toString() { return "T" + id + "(" + outcome.json() + " p" + process + " " + ops + ")"; }
}
