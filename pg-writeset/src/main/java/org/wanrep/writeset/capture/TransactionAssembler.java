package org.wanrep.writeset.capture;

import org.wanrep.writeset.KeyCheck;
import org.wanrep.writeset.RowChange;
import org.wanrep.writeset.WriteSetRefusedException;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Builds transactions from wal2json records between B and C. wal2json sends each transaction whole,
 * in commit order, never interleaved, so one transaction is open at a time. Pure, no I/O.
 * <p>
 * A transaction that cannot be shipped faithfully (TRUNCATE, no identity, NaN numerics, too big, two
 * different tags) is not dropped: it completes with a {@code refusal} so its waiter fails loudly.
 * Beyond {@code maxBytes} the rows are discarded at once, so memory stays bounded.
 */
public final class TransactionAssembler {
    /** A finished transaction. {@code tag} is null when the middleware did not tag it. */
    public record Assembled(long xid, long origin, String endLsn, String tag, List<RowChange> rows,
                            Set<String> tablesWithoutPk, WriteSetRefusedException refusal) {}
    // tablesWithoutPk: quoted names; the capture asks the catalog whether they have REPLICA IDENTITY FULL

    private final String tagPrefix;
    private final long maxBytes;

    private boolean open;
    private long xid, origin, bytes;
    private String tag;
    private List<RowChange> rows = new ArrayList<>();
    private final Set<String> tablesWithoutPk = new LinkedHashSet<>();
    private WriteSetRefusedException refusal;

    public TransactionAssembler(String tagPrefix, long maxBytes) {
        this.tagPrefix = tagPrefix;
        this.maxBytes = maxBytes;
    }

    /** Forget a half-received transaction (after a reconnect the server sends it again). */
    public void reset() {
        open = false;
        rows = new ArrayList<>();
        tablesWithoutPk.clear();
        tag = null;
        refusal = null;
        bytes = 0;
    }

    /**
     * Feeds one record of {@code size} bytes; returns the transaction when the record is its commit.
     */
    public Assembled accept(Wal2JsonRecord r, long size) {
        switch (r) {
            case Wal2JsonRecord.Begin b -> {
                reset();
                open = true;
                xid = b.xid();
                origin = b.origin();
            }
            case Wal2JsonRecord.Message m -> {
                if (!open || !m.transactional() || !tagPrefix.equals(m.prefix())) return null;
                if (tag != null && !tag.equals(m.content()))
                    refuse("transaction tagged twice (" + tag + ", " + m.content() + ")", WriteSetRefusedException.NOT_SUPPORTED);
                tag = m.content();
            }
            case Wal2JsonRecord.Truncate t -> {
                if (open) refuse("TRUNCATE " + t.schema() + "." + t.table() + " cannot be shipped as a write set", WriteSetRefusedException.NOT_SUPPORTED);
            }
            case Wal2JsonRecord.Row row -> {
                if (!open) return null;
                if (!row.problems().isEmpty()) {
                    String p = String.join("; ", row.problems());
                    refuse(p, p.contains("identity") ? WriteSetRefusedException.NO_IDENTITY : WriteSetRefusedException.NOT_SUPPORTED);
                }
                bytes += size;
                if (bytes > maxBytes) refuse("transaction write set exceeds the capture limit of " + maxBytes + " bytes", WriteSetRefusedException.TOO_BIG);
                if (refusal != null) return null;   // keep nothing of a refused transaction
                // an insert needs no key to apply; an update or delete of a keyless table never gets here (wal2json drops
                // it) but is refused before COMMIT (exec.WriteSetSql's check), and one under REPLICA IDENTITY FULL has no pk
                if (!row.tableHasPk() && row.change().action() != org.wanrep.writeset.RowChange.Action.INSERT)
                    tablesWithoutPk.add(KeyCheck.quoted(row.change().schema(), row.change().table()));
                rows.add(row.change());
            }
            case Wal2JsonRecord.Commit c -> {
                if (!open) return null;
                Assembled a = new Assembled(xid, origin, c.endLsn(), tag, List.copyOf(rows), Set.copyOf(tablesWithoutPk), refusal);
                reset();
                return a;
            }
        }
        return null;
    }

    /** A record too big to even parse: the open transaction is refused. */
    public void tooBig(long size) {
        if (open) refuse("transaction write set exceeds the capture limit of " + maxBytes + " bytes (one change record has " + size + ")",
                WriteSetRefusedException.TOO_BIG);
    }

    /** A record that could not be parsed: the open transaction cannot be trusted any more. */
    public void poison(String why) {
        if (open) refuse("unreadable change record: " + why, "XX000");
    }

    private void refuse(String message, String sqlState) {
        if (refusal == null) refusal = new WriteSetRefusedException(message, sqlState);
        rows = new ArrayList<>();
    }
}
