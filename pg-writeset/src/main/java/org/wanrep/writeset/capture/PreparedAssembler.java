package org.wanrep.writeset.capture;

import org.wanrep.writeset.WriteSetRefusedException;
import org.wanrep.writeset.capture.TestDecodingParser.Change;
import org.wanrep.writeset.capture.TestDecodingParser.Event;

import java.util.ArrayList;
import java.util.List;

/**
 * Builds prepared transactions from test_decoding events between {@code BEGIN} and
 * {@code PREPARE TRANSACTION}. Decoding sends each transaction whole, in prepare/commit order, never
 * interleaved, so one transaction is open at a time. Pure, no I/O.
 * <p>
 * Every event that ends something the slot may confirm (a prepare, an ordinary commit, a
 * {@code COMMIT PREPARED} or {@code ROLLBACK PREPARED}) yields a {@link Done}; only a prepare carries rows.
 * An ordinary transaction's rows are not kept, but its bytes are counted like a prepared one's: which of
 * the two it is shows only at its end. Beyond {@code maxBytes} the rows are dropped at once, so memory
 * stays bounded, and a prepare of such a transaction is refused (54000).
 */
public final class PreparedAssembler {
    /**
     * Something finished at {@code lsn}. {@code gid} is non-null only for a prepare; {@code changes} then
     * holds its rows unless {@code refusal} says why it cannot be shipped.
     */
    public record Done(String gid, String lsn, List<Change> changes, WriteSetRefusedException refusal, boolean rowless) {
        public Done(String gid, String lsn, List<Change> changes, WriteSetRefusedException refusal) {
            this(gid, lsn, changes, refusal, false);
        }

        public boolean isPrepare() { return gid != null; }
    }

    private final long maxBytes;
    private boolean open;
    /** The open transaction printed a row change (or a TRUNCATE): one that printed none changed the catalog, say. */
    private boolean printedRows;
    private long bytes;
    private List<Change> changes = new ArrayList<>();
    private WriteSetRefusedException refusal;

    public PreparedAssembler(long maxBytes) { this.maxBytes = maxBytes; }

    /** Forget a half-received transaction (after a reconnect the server sends it again). */
    public void reset() {
        open = false;
        printedRows = false;
        bytes = 0;
        changes = new ArrayList<>();
        refusal = null;
    }

    public boolean isOpen() { return open; }

    /** Feeds one event of {@code size} bytes received at {@code lsn}; returns what it finished, if anything. */
    public Done accept(Event e, long size, String lsn) {
        switch (e) {
            case TestDecodingParser.Begin b -> {
                reset();
                open = true;
            }
            case Change c -> {
                if (!open) return null;
                printedRows = true;
                count(size);
                if (refusal == null) changes.add(c);
            }
            case TestDecodingParser.Message m -> { }   // the middleware's tags mean nothing here: the gid names the transaction
            case TestDecodingParser.Truncate t -> {
                printedRows = true;
                if (open) refuse("a write set cannot carry TRUNCATE (of " + t.tables() + ")", WriteSetRefusedException.NOT_SUPPORTED);
            }
            case TestDecodingParser.Prepare p -> {
                if (!open) return null;   // cannot happen: decoding sends BEGIN first (skip-empty-xacts=0)
                Done d = new Done(p.gid(), lsn, List.copyOf(changes), refusal);
                reset();
                return d;
            }
            case TestDecodingParser.Commit c -> {
                // a committed transaction with an id but no row (DDL, SELECT FOR UPDATE...): descriptions of tables may be stale
                boolean rowless = open && !printedRows;
                reset();
                return new Done(null, lsn, List.of(), null, rowless);
            }
            // standalone (prepared earlier) or, for a transaction prepared before the slot could decode
            // prepares, the end of BEGIN ... COMMIT PREPARED: either way nothing to hand over
            case TestDecodingParser.CommitPrepared c -> {
                reset();
                return new Done(null, lsn, List.of(), null);
            }
            case TestDecodingParser.RollbackPrepared r -> {
                reset();
                return new Done(null, lsn, List.of(), null);
            }
        }
        return null;
    }

    /** A message too big to parse, or not parsed: counts against the open transaction. */
    public void tooBig(long size) {
        if (open) {
            count(size);
            refuse("transaction write set exceeds the capture limit of " + maxBytes + " bytes (one change record has " + size + ")",
                    WriteSetRefusedException.TOO_BIG);
        }
    }

    /** A message that could not be parsed: the open transaction cannot be trusted any more. */
    public void poison(String why) {
        if (open) refuse("unreadable change record: " + why, "XX000");
    }

    private void count(long size) {
        bytes += size;
        if (bytes > maxBytes) refuse("transaction write set exceeds the capture limit of " + maxBytes + " bytes", WriteSetRefusedException.TOO_BIG);
    }

    private void refuse(String message, String sqlState) {
        if (refusal == null) refusal = new WriteSetRefusedException(message, sqlState);
        changes = new ArrayList<>();
    }
}
