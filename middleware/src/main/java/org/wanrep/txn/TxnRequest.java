package org.wanrep.txn;

import org.wanrep.lock.TableSet;

import java.util.List;

/**
 * What is multicast for one update transaction: enough for any site to take the same locks and run
 * the same work. {@code messages} are self-contained frontend messages (Query, or
 * Parse/Bind/Describe/Execute/Sync with named statements already inlined, COPY data included), run at
 * each site in database {@code database}; {@code timestampMicros} and {@code seed} are fixed by the
 * origin so that now() and random() agree everywhere.
 */
public record TxnRequest(RequestId id, Kind kind, TableSet tables, String database, List<WireMessage> messages,
                         long timestampMicros, long seed) {
    public enum Kind {
        /** An autocommit request: run at every site in lock order. */
        AUTOCOMMIT,
        /** Interactive fallback, first write: a cluster-wide exclusive lock for the block. */
        EXCLUSIVE,
        /** Interactive fallback, COMMIT: the block's statement log, re-executed at the other sites. */
        STATEMENT_LOG
    }

    public TxnRequest {
        messages = List.copyOf(messages);
    }
}
