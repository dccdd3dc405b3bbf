package org.wanrep.frontend;

import org.wanrep.sql.BoundParameters;
import org.wanrep.sql.SessionCommands;
import org.wanrep.wire.Messages;
import org.wanrep.wire.PayloadReader;
import org.wanrep.wire.WireMessage;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The named prepared statements of one client session, as sent to its backend: what a request's Bind and
 * Execute messages run (its SQL texts, for the classifier), and the Parse messages a request must carry to
 * run at another site, where the session's earlier requests never ran. Pure bookkeeping, no I/O.
 */
final class NamedStatements {
    /** Name -> the Parse message as sent to the backend. */
    private final Map<String, WireMessage> parses = new HashMap<>();
    /** The SQL of each named statement, decoded once (Bind/Execute of a prepared statement looks it up every time). */
    private final Map<String, String> sql = new HashMap<>();
    /** Payload bytes held (message and decoded text): kept beyond their request, so counted in the session's budget. */
    private long bytes;

    long bytes() { return bytes; }

    /** The SQL texts a request executes: Query texts, and the statements its Executes run. */
    List<String> texts(List<WireMessage> unit) { return texts(unit, false); }

    /**
     * With {@code boundValues}, each Execute's text has the values its Bind gave the parameters
     * inlined where {@link BoundParameters} can do so with certainty, so that the classifier sees the
     * rows a prepared update touches (for the lock set only: execution still sends Parse and Bind).
     * The lock set is derived here, at the origin, and travels with the request.
     */
    List<String> texts(List<WireMessage> unit, boolean boundValues) {
        List<String> texts = new ArrayList<>();
        Map<String, String> parsedHere = new HashMap<>();
        Map<String, WireMessage> parseHere = new HashMap<>();
        Map<String, String> portals = new HashMap<>();
        for (WireMessage m : unit) {
            switch (m.kind()) {
                case 'Q' -> texts.add(m.queryText());
                case 'P' -> {
                    parsedHere.put(Messages.parseName(m), Messages.parseQuery(m));
                    parseHere.put(Messages.parseName(m), m);
                }
                case 'B' -> {
                    String[] names = Messages.bindNames(m);
                    String text = parsedHere.get(names[1]);
                    WireMessage parse = parseHere.get(names[1]);
                    if (text == null) {
                        text = sql.get(names[1]);
                        parse = parses.get(names[1]);
                    }
                    if (boundValues && text != null && parse != null && text.indexOf('$') >= 0) {
                        Messages.BoundValues v = Messages.bindValues(m);
                        String inlined = BoundParameters.inline(text, v.values(), v.formats(), Messages.parseParameterTypes(parse));
                        if (inlined != null) text = inlined;
                    }
                    portals.put(names[0], text);
                }
                case 'E' -> {
                    String portal = new PayloadReader(m.payload()).cstring();
                    String text = portals.get(portal);
                    // an Execute of a portal bound earlier (a cursor): unknown here, so every table
                    texts.add(text != null ? text : "/* unknown portal */ LOCK ALL");
                }
                default -> { }
            }
        }
        return texts;
    }

    /**
     * {@code ms} with the Parse of every named statement it uses but does not define put first: the same as
     * parsing it just before its use (the unit cannot use a name it closes first), and a site that executes for
     * us returns their ParseCompletes first, where we can drop them. {@code defined}: the names defined so far
     * (by earlier messages of the same block's log), updated.
     */
    List<WireMessage> selfContained(List<WireMessage> ms, Set<String> defined) {
        List<WireMessage> prefix = new ArrayList<>(), body = new ArrayList<>(ms.size());
        for (WireMessage m : ms) {
            String needs = null;
            if (m.kind() == 'P') defined.add(Messages.parseName(m));
            else if (m.kind() == 'B') needs = Messages.bindNames(m)[1];
            else if (m.kind() == 'D' && Messages.describeTarget(m).isStatement()) needs = Messages.describeTarget(m).name();
            else if (m.kind() == 'C' && Messages.closeTarget(m).isStatement()) defined.remove(Messages.closeTarget(m).name());
            if (needs != null && !needs.isEmpty() && !defined.contains(needs) && parses.containsKey(needs)) {
                prefix.add(parses.get(needs));
                defined.add(needs);
            }
            body.add(m);
        }
        if (prefix.isEmpty()) return body;
        prefix.addAll(body);
        return prefix;
    }

    /** Keeps the registry current with what was sent: Parse and Close of named statements, DISCARD/DEALLOCATE ALL. */
    void note(List<WireMessage> unit) {
        for (WireMessage m : unit) {
            if (m.kind() == 'P') {
                String name = Messages.parseName(m);
                if (!name.isEmpty()) {
                    WireMessage old = parses.put(name, m);
                    // twice: the message and its decoded text
                    bytes += 2L * (m.payload().length - (old == null ? 0 : old.payload().length));
                    sql.put(name, Messages.parseQuery(m));
                }
            } else if (m.kind() == 'C' && Messages.closeTarget(m).isStatement()) {
                String name = Messages.closeTarget(m).name();
                WireMessage old = parses.remove(name);
                if (old != null) bytes -= 2L * old.payload().length;
                sql.remove(name);
            } else if (m.kind() == 'Q') {
                if (SessionCommands.discardsStatements(m.queryText())) {
                    parses.clear();
                    sql.clear();
                    bytes = 0;
                }
            }
        }
    }
}
