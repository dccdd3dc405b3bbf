package org.wanrep.txn;

import org.wanrep.lock.TableSet;
import org.wanrep.wire.WireMessage;

import java.util.List;
import java.util.Map;

/**
 * What is multicast for one update transaction: enough for any site to take the same locks and run
 * the same work. {@code messages} are self-contained frontend messages (Query, or
 * Parse/Bind/Describe/Execute/Sync with the named statements they use parsed first, COPY data
 * included), run at each site in database {@code database} with the origin session's
 * {@code settings} (TimeZone, DateStyle, search_path...) set locally, so that the same text means
 * the same thing everywhere. {@code timestampMicros} is the origin's transaction time (time
 * functions are rewritten to it) and {@code seed}, when not 0, seeds random() at every site.
 */
public record TxnRequest(RequestId id, Kind kind, TableSet tables, String database, List<WireMessage> messages,
                         long timestampMicros, long seed, Map<String, String> settings) {
    public enum Kind {
        /** An autocommit request: run at every site in lock order. */
        AUTOCOMMIT,
        /** Interactive block, first write: a cluster-wide exclusive lock for the block. */
        EXCLUSIVE,
        /** Interactive block, COMMIT: the block's statement log, re-executed at the other sites. */
        STATEMENT_LOG,
        /** Interactive block ended without commit: the exclusive lock is released, nothing runs. */
        RELEASE
    }

    public TxnRequest {
        messages = List.copyOf(messages);
        settings = Map.copyOf(settings);
    }

    public TxnRequest(RequestId id, Kind kind, TableSet tables, String database, List<WireMessage> messages, long timestampMicros, long seed) {
        this(id, kind, tables, database, messages, timestampMicros, seed, Map.of());
    }
}
