package org.wanrep.checker;

import java.util.List;

/**
 * One line of a history: the invocation or the completion of transaction {@code txn} by client {@code process}.
 * {@code time} is the client's clock in nanoseconds (any epoch, the same for the whole history); {@code node} names the
 * site the client talks to and {@code error} says why a transaction failed or is unknown (both optional, may be null).
 * A history's events are in the order they happened; that order (not {@code time}) defines real-time precedence.
 */
public record Event(int process, long txn, OpType type, long time, List<MicroOp> ops, String node, String error) {
    public Event {
        ops = List.copyOf(ops);
    }

    public static Event invoke(int process, long txn, long time, List<MicroOp> ops) {
        return new Event(process, txn, OpType.INVOKE, time, ops, null, null);
    }

    public static Event complete(int process, long txn, OpType type, long time, List<MicroOp> ops) {
        return new Event(process, txn, type, time, ops, null, null);
    }
}
