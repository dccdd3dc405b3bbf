package org.wanrep.sql;

import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a SQL text leaves behind in its session beyond the transaction, read from each statement's
 * leading keywords (statements split by {@link UnitClassifier#splitStatements}, comments removed).
 * Where it cannot tell, it answers that state may be left: a needless DISCARD ALL costs a round
 * trip, a missed one leaks settings into another client's transaction.
 */
public final class SessionCommands {
    private SessionCommands() {}

    /** Leading keywords of statements that always change the session (or may: DO runs anything). */
    private static final Set<String> SESSION_COMMANDS = Set.of("reset", "discard", "prepare", "deallocate", "listen", "unlisten", "load", "do");
    private static final Pattern TEMP = Pattern.compile("\\b(temp|temporary|pg_temp)\\b");
    private static final Pattern SET_CONFIG = Pattern.compile("\\bset_config\\s*\\(");
    private static final Pattern SESSION_LOCK = Pattern.compile("\\bpg_(try_)?advisory_lock(_shared)?\\s*\\(");
    private static final Pattern WITH_HOLD = Pattern.compile("\\bwith\\s+hold\\b");

    /**
     * True if {@code sql} may change session state that outlives its transaction: SET (not SET LOCAL,
     * SET TRANSACTION, SET CONSTRAINTS), RESET, DISCARD, PREPARE, DEALLOCATE, (UN)LISTEN, LOAD, DO,
     * anything mentioning a temporary object, a cursor WITH HOLD, set_config(...) unless its
     * is_local argument is literally true, session-level advisory locks.
     */
    public static boolean changesSessionState(String sql) {
        for (String st : UnitClassifier.splitStatements(sql)) {
            String s = normalized(st);
            if (s.isEmpty()) continue;
            String first = word(s, 0);
            if (SESSION_COMMANDS.contains(first)) return true;
            if (first.equals("set")) {
                String second = word(s, first.length() + 1);
                if (!second.equals("local") && !second.equals("transaction") && !second.equals("constraints")) return true;
            }
            if (first.equals("declare") && WITH_HOLD.matcher(s).find()) return true;
            if (TEMP.matcher(s).find() || SESSION_LOCK.matcher(s).find()) return true;
            if (sessionSetConfig(s)) return true;
        }
        return false;
    }

    /** True only if {@code sql} has a DISCARD ALL or DEALLOCATE [PREPARE] ALL statement (which drop every prepared statement). */
    public static boolean discardsStatements(String sql) {
        for (String st : UnitClassifier.splitStatements(sql)) {
            String s = normalized(st);
            if (s.equals("discard all") || s.equals("deallocate all") || s.equals("deallocate prepare all")) return true;
        }
        return false;
    }

    /** A set_config call whose third argument is not the literal true (so it may last the session). */
    private static boolean sessionSetConfig(String s) {
        Matcher m = SET_CONFIG.matcher(s);
        while (m.find()) {
            List<String> args = arguments(s, m.end());
            if (args == null || args.size() != 3 || !args.get(2).equals("true")) return true;
        }
        return false;
    }

    /** Top-level comma-separated arguments from just after '(' up to its ')', or null if unbalanced. */
    private static List<String> arguments(String s, int from) {
        List<String> out = new java.util.ArrayList<>();
        int depth = 0, start = from;
        List<SqlLexer.Token> tokens = SqlLexer.tokens(s, from, s.length());
        if (SqlLexer.unterminated(tokens)) return null;
        for (SqlLexer.Token t : tokens) {
            if (t.is(s, "(")) depth++;
            else if (t.is(s, ")")) {
                if (depth-- == 0) {
                    out.add(s.substring(start, t.start()).trim());
                    return out;
                }
            } else if (t.is(s, ",") && depth == 0) {
                out.add(s.substring(start, t.start()).trim());
                start = t.end();
            }
        }
        return null;
    }

    /**
     * Lower case, string and numeric literals as '?' (a word inside a string is no command), comments
     * removed, runs of white space as one blank, trimmed.
     */
    private static String normalized(String statement) {
        String s = SqlText.normalize(statement);
        return UnitClassifier.stripComments(s).trim().replaceAll("\\s+", " ").toLowerCase(Locale.ROOT);
    }

    /** The word starting at {@code from} (up to a blank, a parenthesis or the end). */
    private static String word(String s, int from) {
        if (from >= s.length()) return "";
        int i = from;
        while (i < s.length() && s.charAt(i) != ' ' && s.charAt(i) != '(') i++;
        return s.substring(from, i);
    }
}
