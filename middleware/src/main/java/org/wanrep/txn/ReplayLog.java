package org.wanrep.txn;

import org.wanrep.sql.SqlLexer;
import org.wanrep.sql.SqlText;
import org.wanrep.wire.WireMessage;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * What the other sites replay of a certified block whose CERTIFY carries its statement log (symmetric execution
 * without write sets): the log as short as certification lets it be. Fed each unit of the block as the origin logged
 * it, in order.
 * <ul>
 * <li>A unit that only read (one simple Query of plain queries, SELECT, WITH, VALUES or TABLE, that the classifier
 *     routed as read-only) changes nothing at another site: certification already checked what it read, and the
 *     replay's results are dropped. It is left out, unless it may call random() or setseed(): the replay must draw
 *     every value the origin drew, in order, for its later draws to be the origin's.</li>
 * <li>When every other unit is one simple Query of plain statements (those queries and INSERT, UPDATE, DELETE, MERGE),
 *     the log travels as ONE Query, their texts joined, which the other sites run together with their BEGIN and, in its
 *     turn, COMMIT as one query string ({@code WireTxnExecutor}): PostgreSQL then answers with one flush, where a
 *     Query per statement cost it a flush and a parse each, and the executor a read each.</li>
 * <li>Otherwise (a session command, a unit that failed, ran code the classifier does not read or changed the catalog,
 *     the extended protocol, COPY) the log travels as it ran.</li>
 * </ul>
 * Joining changes nothing the statements do: each still runs on its own snapshot inside the block, in order. What
 * PostgreSQL reads for the whole string at once is its lexing (standard_conforming_strings, backslash_quote) and its
 * encoding (client_encoding), and only a setting can change those between two statements: a SET, RESET or DISCARD
 * (session commands, not plain), {@code set_config()} (looked for in every text), or a function or trigger the
 * classifier does not read (such a unit is not joined). The texts are complete (each ran on its own at the origin), and
 * a new line ends a {@code --} comment before the next one.
 */
final class ReplayLog {
    /** How joined texts are separated: a new line ends a trailing {@code --} comment, the semicolon the statement. */
    static final String SEPARATOR = "\n;\n";

    private static final Set<String> QUERIES = Set.of("select", "with", "values", "table");
    private static final Set<String> PLAIN = Set.of("select", "with", "values", "table", "insert", "update", "delete", "merge");

    private final List<WireMessage> joined = new ArrayList<>();
    private boolean joinable = true;
    private int left;

    /**
     * One unit of the block as logged ({@code logged}: what its log holds of it); {@code succeeded}: it ran without an
     * error; {@code readOnly}: the classifier routed it as a query or session command, not an update; {@code unread}: it
     * may have run code the classifier does not read; {@code catalogChange}: it changed the catalog.
     */
    void add(List<WireMessage> logged, boolean succeeded, boolean readOnly, boolean unread, boolean catalogChange) {
        if (!joinable) return;
        if (!succeeded || unread || catalogChange || logged.size() != 1 || logged.get(0).kind() != 'Q') {
            joinable = false;
            return;
        }
        String text = logged.get(0).queryText();
        if (readOnly && only(text, QUERIES)) {
            if (!drawsRandom(text)) {
                left++;
                return;
            }
            // it draws from random()'s sequence (or seeds it): left out, every later random() of the replay would
            // draw another value than the origin's did
            joined.add(logged.get(0));
            return;
        }
        if (readOnly || !only(text, PLAIN)) {
            joinable = false;
            return;
        }
        joined.add(logged.get(0));
    }

    /** What travels in place of {@code log}, the block's whole log: one joined Query, or {@code log} itself. */
    List<WireMessage> shipped(List<WireMessage> log) {
        if (!joinable || joined.isEmpty()) return log;
        return List.of(WireMessage.joinedQueries(joined, SEPARATOR));
    }

    /**
     * Whether every unit so far was one simple Query of plain statements that succeeded (no session command, no
     * set_config(), no code the classifier does not read): none of them can have changed a setting.
     */
    boolean plain() { return joinable; }

    /** Units left out so far (they only read). */
    int readsLeftOut() { return joinable ? left : 0; }

    /**
     * Whether {@code text} may call random() or setseed(): the block's seed is set at every site before its log, so the
     * replay draws what the origin drew only if it makes every draw the origin made, in order. (Code the classifier does
     * not read, which could draw too, makes the whole log travel as it ran.)
     */
    static boolean drawsRandom(String text) {
        return SqlText.containsIgnoreCase(text, "random") || SqlText.containsIgnoreCase(text, "setseed");
    }

    /**
     * Whether every statement of {@code text} begins with one of {@code words} and none calls set_config(). One pass
     * over the text's tokens (the lexer's memo has them): a piece between semicolons that holds only a comment counts
     * as a statement without a first word.
     */
    static boolean only(String text, Set<String> words) {
        List<SqlLexer.Token> tokens = SqlLexer.tokens(text);
        if (SqlLexer.unterminated(tokens)) return false;
        int statements = 0;
        boolean inPiece = false, begun = false;   // the current piece has a token other than spaces; its first word was read
        for (SqlLexer.Token t : tokens) {
            if (t.kind() == SqlLexer.Kind.SEMICOLON) {
                if (inPiece && !begun) return false;
                inPiece = begun = false;
                continue;
            }
            if (t.kind() == SqlLexer.Kind.SPACE) continue;
            inPiece = true;
            if (begun || !t.significant()) continue;
            if (!t.word() || !words.contains(SqlLexer.fold(t.text(text)))) return false;
            begun = true;
            statements++;
        }
        if (inPiece && !begun || statements == 0) return false;
        // a call's name is in the text as written: most texts cannot call it, and need no second lexing for that
        if (!SqlText.containsIgnoreCase(text, "set_config")) return true;
        for (String f : SqlText.functionCalls(text)) if (f.equals("set_config") || f.endsWith(".set_config")) return false;
        return true;
    }
}
