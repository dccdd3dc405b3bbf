package org.wanrep.frontend;

import org.wanrep.backend.BackendConnection;
import org.wanrep.wire.Messages;
import org.wanrep.wire.PayloadReader;
import org.wanrep.wire.PgError;
import org.wanrep.wire.ProtocolException;
import org.wanrep.wire.WireMessage;
import org.wanrep.wire.WireStream;

import java.io.EOFException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * COPY FROM STDIN, the client's side. An autocommit COPY is ordered with its data, so the data is gathered first
 * ({@link #gather}); inside a block the data goes to the backend as it comes ({@link #relay}); data the session
 * cannot hold is dropped up to the client's CopyDone or CopyFail and the COPY refused with 53200.
 */
final class CopyFromClient {
    private final WireStream client;
    /** Settles the session's budget share after data was dropped. */
    private final Runnable settle;
    /** The 53200 error for data the budget has no room for. */
    private final Function<WireStream.OverBudgetException, PgError> outOfMemory;

    CopyFromClient(WireStream client, Runnable settle, Function<WireStream.OverBudgetException, PgError> outOfMemory) {
        this.client = client;
        this.settle = settle;
        this.outOfMemory = outOfMemory;
    }

    /** Whether a request is one simple Query that is a COPY FROM STDIN. */
    static boolean isFromStdin(List<WireMessage> unit) {
        if (unit.size() != 1 || unit.get(0).kind() != 'Q') return false;
        String text = unit.get(0).queryText();
        int i = 0;
        while (i < text.length() && Character.isWhitespace(text.charAt(i))) i++;
        // the regular expression only for texts that begin with COPY (it scanned every request's whole text)
        return text.regionMatches(true, i, "copy", 0, 4) && FROM_STDIN.matcher(text).matches();
    }

    private static final java.util.regex.Pattern FROM_STDIN = java.util.regex.Pattern.compile("(?is)\\s*copy\\b.*\\bfrom\\s+stdin\\b.*");

    /** Relays the client's COPY data to {@code backend} up to its CopyDone or CopyFail, adding each message to {@code sent}. */
    void relay(BackendConnection backend, List<WireMessage> sent) throws IOException {
        while (true) {
            WireMessage m;
            try {
                m = client.read();
            } catch (WireStream.OverBudgetException e) {
                // no room for the data: the backend's COPY fails (its error reaches the client), the rest is dropped
                WireMessage fail = Messages.copyFail("wanrep: out of memory: " + e.getMessage() + " (SQLSTATE 53200)");
                backend.send(fail);
                backend.flush();
                sent.add(fail);
                drain();
                return;
            }
            switch (m.kind()) {
                case 'd', 'c', 'f', 'H', 'S' -> {
                    backend.send(m);
                    sent.add(m);
                    if (m.kind() == 'c' || m.kind() == 'f') {
                        backend.flush();
                        return;
                    }
                }
                case 'X' -> throw new EOFException("client terminated during COPY");
                default -> throw new ProtocolException("unexpected message type '" + m.kind() + "' during COPY from stdin");
            }
        }
    }

    /** An autocommit COPY with its data ({@code request}), or why it is refused (nothing of it ran). */
    record Gathered(List<WireMessage> request, PgError refused) {}

    /**
     * Asks the backend for the COPY's CopyInResponse (then abandons that attempt), passes it to the client
     * and gathers the data, so that the request carries it when it is ordered.
     */
    Gathered gather(BackendConnection backend, List<WireMessage> unit) throws IOException {
        backend.run("BEGIN");
        backend.send(unit.get(0));
        backend.flush();
        WireMessage g = null;
        PgError err = null;
        while (!backend.tracker().idle()) {
            if (backend.tracker().awaitingCopyData()) {
                backend.send(Messages.copyFail("wanrep: probing COPY"));
                backend.flush();
                continue;
            }
            WireMessage m = backend.read();
            if (m.kind() == 'G') g = m;
            if (m.kind() == 'E' && g == null && err == null) err = PgError.parse(m);
        }
        backend.run("ROLLBACK");
        if (g == null) return new Gathered(null, err != null ? err : PgError.error("XX000", "wanrep: COPY did not start"));
        client.write(g);
        client.flush();
        List<WireMessage> withData = new ArrayList<>(unit);
        while (true) {
            WireMessage m;
            try {
                m = client.read();
            } catch (WireStream.OverBudgetException e) {
                // the data must be whole before it is ordered: no room for it, so the COPY is refused
                withData = null;
                settle.run();
                drain();
                return new Gathered(null, outOfMemory.apply(e));
            }
            if (m.kind() == 'd') withData.add(m);
            else if (m.kind() == 'c') {
                withData.add(m);
                return new Gathered(withData, null);
            } else if (m.kind() == 'f') {
                return new Gathered(null, PgError.error("57014", "COPY from stdin failed: " + new PayloadReader(m.payload()).cstring()));
            } else if (m.kind() == 'H' || m.kind() == 'S') {
                // ignored during COPY, as PostgreSQL does
            } else throw new ProtocolException("unexpected message type '" + m.kind() + "' during COPY from stdin");
        }
    }

    /** Reads and drops the client's COPY data up to its CopyDone or CopyFail. */
    private void drain() throws IOException {
        while (true) {
            WireMessage m;
            try {
                m = client.read();
            } catch (WireStream.OverBudgetException e) {
                continue;
            }
            settle.run();
            switch (m.kind()) {
                case 'c', 'f' -> { return; }
                case 'd', 'H', 'S' -> { }
                case 'X' -> throw new EOFException("client terminated during COPY");
                default -> throw new ProtocolException("unexpected message type '" + m.kind() + "' during COPY from stdin");
            }
        }
    }
}
