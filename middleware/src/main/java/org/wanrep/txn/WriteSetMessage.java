package org.wanrep.txn;

import org.wanrep.wire.WireMessage;
import org.wanrep.writeset.WriteSet;

import java.util.List;
import java.util.Map;

/**
 * What the executing site of a write-set transaction multicasts (RELIABLE) once it committed or
 * failed: the transaction's write set and the values its sequences reached (logical decoding does
 * not carry sequences), and for a client at another site the replies it gets. A failed transaction
 * ships no write set: the others only stop waiting for it, and its origin returns the error.
 *
 * @param executor  the member that executed it
 * @param committed whether it committed there
 * @param replies   the replies to the client's messages (empty when the origin executed it)
 * @param writeSet  the rows it changed (null when it did not commit)
 * @param sequences sequence name ({@code schema.name}) to its last value, to set at every other site
 */
public record WriteSetMessage(RequestId id, String executor, boolean committed, List<WireMessage> replies,
                              WriteSet writeSet, Map<String, Long> sequences) {
    public WriteSetMessage {
        replies = List.copyOf(replies);
        sequences = Map.copyOf(sequences);
        if (committed && writeSet == null) throw new IllegalArgumentException("a committed transaction ships its write set");
    }
}
