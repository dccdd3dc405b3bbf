package org.wanrep.writeset.capture;

import org.wanrep.writeset.RowChange;

import java.util.List;

/** One line of wal2json format-version 2 output, as {@link Wal2JsonParser} understands it. */
public sealed interface Wal2JsonRecord {
    long xid();

    /** Replication origin of the transaction: 0 = local, anything else = applied by an applier. */
    long origin();

    record Begin(long xid, long origin) implements Wal2JsonRecord {}

    /** {@code endLsn} is the end of the commit record: confirming it means "never send this again". */
    record Commit(long xid, long origin, String endLsn) implements Wal2JsonRecord {}

    record Message(long xid, long origin, boolean transactional, String prefix, String content) implements Wal2JsonRecord {}

    /**
     * A row change. {@code tableHasPk} is false for tables without primary key (REPLICA IDENTITY
     * FULL, USING INDEX, or none at all: wal2json cannot tell the last two apart for an INSERT).
     * {@code problems} lists why this row cannot be shipped faithfully (empty when it can).
     */
    record Row(long xid, long origin, RowChange change, boolean tableHasPk, List<String> problems) implements Wal2JsonRecord {}

    record Truncate(long xid, long origin, String schema, String table) implements Wal2JsonRecord {}
}
