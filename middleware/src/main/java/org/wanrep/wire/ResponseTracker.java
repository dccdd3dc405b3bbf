package org.wanrep.wire;

import java.util.ArrayDeque;

/**
 * Knows, for the frontend messages sent to a PostgreSQL backend, when all their responses have
 * arrived. Each Parse, Bind, Describe, Execute, Close, Sync and Query waits in send order for its
 * terminating response; an error in extended mode makes the backend skip to the next Sync; and
 * asynchronous messages (notices, parameter status, notifications) never count. This lets the
 * proxy relay a pipeline, or replay a request, without guessing how many answers will come.
 */
public final class ResponseTracker {
    private enum Expect { PARSE, BIND, DESCRIBE, EXECUTE, CLOSE, SYNC, QUERY }

    private final ArrayDeque<Expect> pending = new ArrayDeque<>();
    private boolean skippingToSync;
    private boolean copyIn;
    private int copyEndsAhead;     // CopyDone/CopyFail pipelined before their CopyInResponse arrived
    private char lastStatus = 'I';

    /** Note a frontend message as sent. */
    public void sent(WireMessage m) {
        switch (m.kind()) {
            case 'P' -> extended(Expect.PARSE);
            case 'B' -> extended(Expect.BIND);
            case 'D' -> extended(Expect.DESCRIBE);
            case 'E' -> extended(Expect.EXECUTE);
            case 'C' -> extended(Expect.CLOSE);
            case 'S' -> { pending.add(Expect.SYNC); skippingToSync = false; }
            case 'Q' -> { if (!skippingToSync) pending.add(Expect.QUERY); }   // ignored too until the Sync: no answer comes
            case 'c', 'f' -> {
                if (copyIn) copyIn = false;
                else copyEndsAhead++;
            }
            default -> { }   // Flush, CopyData: no response of their own
        }
    }

    private void extended(Expect e) {
        if (!skippingToSync) pending.add(e);   // the backend ignores it until Sync
    }

    /** Note a backend message as received. */
    public void received(WireMessage m) {
        char k = m.kind();
        if (k == 'N' || k == 'S' || k == 'A') return;   // asynchronous
        Expect head = pending.peek();
        if (k == 'Z') {
            lastStatus = Messages.status(m);
            copyIn = false;
            copyEndsAhead = 0;   // copy data the backend did not use (its COPY failed) was ignored
            while (!pending.isEmpty()) {   // pops the Query or Sync it answers
                Expect e = pending.poll();
                if (e == Expect.SYNC || e == Expect.QUERY) break;
            }
            return;
        }
        if (k == 'G') {
            if (copyEndsAhead > 0) copyEndsAhead--;   // its data went ahead of it
            else copyIn = true;
        }
        if (head == null) {
            // an error nothing awaited: a message that has no answer of its own failed (a Flush with a payload is
            // "invalid message format"), and the backend now skips everything, a Query too, until a Sync
            if (k == 'E') skippingToSync = true;
            return;
        }
        switch (head) {
            case QUERY -> { if (k == 'E') copyIn = false; }   // a Query ends with its ReadyForQuery only
            case SYNC -> { }                                   // e.g. an error at the implicit COMMIT
            default -> {
                if (k == 'E') {
                    copyIn = false;
                    while (!pending.isEmpty() && pending.peek() != Expect.SYNC) pending.poll();
                    skippingToSync = pending.isEmpty();
                } else if (terminates(head, k)) {
                    pending.poll();
                }
            }
        }
    }

    private static boolean terminates(Expect e, char k) {
        return switch (e) {
            case PARSE -> k == '1';
            case BIND -> k == '2';
            case DESCRIBE -> k == 'T' || k == 'n';   // a statement Describe sends ParameterDescription first
            case EXECUTE -> k == 'C' || k == 'I' || k == 's';
            case CLOSE -> k == '3';
            default -> false;
        };
    }

    /** True when every message sent so far has been answered (or skipped after an error). */
    public boolean idle() { return pending.isEmpty(); }

    /** The backend waits for CopyData from us (CopyInResponse seen, CopyDone/CopyFail not yet sent). */
    public boolean awaitingCopyData() { return copyIn; }

    /** An error made the backend skip the rest until a Sync that was not sent yet. */
    public boolean skippingToSync() { return skippingToSync; }

    /** Transaction status of the last ReadyForQuery. */
    public char lastStatus() { return lastStatus; }
}
