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
        return !plainlyKeepsSession(sql) && changesSessionStateByTokens(sql);
    }

    /** {@link #changesSessionState} read token by token (without the first look). */
    static boolean changesSessionStateByTokens(String sql) {
        List<SqlLexer.Token> ts = SqlLexer.tokens(sql);
        if (!plain(ts)) return changesSessionStateByText(sql);
        int from = 0;
        for (int i = 0; i <= ts.size(); i++) {
            if (i < ts.size() && ts.get(i).kind() != SqlLexer.Kind.SEMICOLON) continue;
            if (statementChangesSession(sql, ts, from, i)) return true;
            from = i + 1;
        }
        return false;
    }

    /**
     * A look without lexing that answers "keeps" only where the readings below would (every replicated update passes
     * here at every site, a certified block's joined statements too): none of the words a session change needs (temp,
     * set_config, advisory) in any case anywhere, and every statement starts with a whole ASCII word that is no session
     * command, SET or DECLARE. Statements are told apart at semicolons only in a text without quotes, dollar signs,
     * backslashes or comments (where each semicolon ends one; the replicated clock this proxy wrote is read as the NULL
     * it stands for here); in any other text only a last semicolon may stand.
     * Anything else is read token by token.
     */
    static boolean plainlyKeepsSession(String sql) {
        sql = TimeRewriting.withoutReplicatedClock(sql);   // our clock reads a setting, with quotes: a replicated INSERT's
        if (SqlText.containsIgnoreCase(sql, "temp") || SqlText.containsIgnoreCase(sql, "set_config") || SqlText.containsIgnoreCase(sql, "advisory"))
            return false;
        int n = sql.length();
        boolean quoted = false;
        for (int i = 0; i < n && !quoted; i++) {
            char c = sql.charAt(i);
            quoted = c == '\'' || c == '"' || c == '$' || c == '\\' || c == '-' && i + 1 < n && sql.charAt(i + 1) == '-'
                    || c == '/' && i + 1 < n && sql.charAt(i + 1) == '*';
        }
        int from = 0;
        while (true) {
            int semicolon = sql.indexOf(';', from);
            int end = semicolon < 0 ? n : semicolon;
            boolean last = semicolon < 0 || blankFrom(sql, semicolon + 1);
            if (!last && quoted) return false;
            // an empty statement (a joined log's separator after a text's own semicolon) changes nothing
            if (!blank(sql, from, end) && !plainStart(sql, from, end)) return false;
            if (last) return true;
            from = semicolon + 1;
        }
    }

    private static boolean blankFrom(String sql, int from) { return blank(sql, from, sql.length()); }

    private static boolean blank(String sql, int from, int to) {
        for (int k = from; k < to; k++) if (!Character.isWhitespace(sql.charAt(k))) return false;
        return true;
    }

    /** Whether {@code sql[from, to)} starts with a whole ASCII word that is no session command, SET or DECLARE. */
    private static boolean plainStart(String sql, int from, int to) {
        int i = from;
        while (i < to && Character.isWhitespace(sql.charAt(i))) i++;
        int start = i;
        while (i < to && (sql.charAt(i) | 0x20) >= 'a' && (sql.charAt(i) | 0x20) <= 'z') i++;
        if (i == start || i < to && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '_' || sql.charAt(i) == '$' || sql.charAt(i) > 127))
            return false;
        String first = sql.substring(start, i).toLowerCase(Locale.ROOT);
        return !SESSION_COMMANDS.contains(first) && !first.equals("set") && !first.equals("declare");
    }

    /** True only if {@code sql} has a DISCARD ALL or DEALLOCATE [PREPARE] ALL statement (which drop every prepared statement). */
    public static boolean discardsStatements(String sql) {
        // every update request passes here at its origin: without either word nothing needs lexing
        if (!SqlText.containsIgnoreCase(sql, "discard") && !SqlText.containsIgnoreCase(sql, "deallocate")) return false;
        List<SqlLexer.Token> ts = SqlLexer.tokens(sql);
        if (!plain(ts)) return discardsStatementsByText(sql);
        List<String> words = new java.util.ArrayList<>();
        for (int i = 0; i <= ts.size(); i++) {
            if (i < ts.size() && ts.get(i).kind() != SqlLexer.Kind.SEMICOLON) {
                if (ts.get(i).significant()) words.add(lower(sql, ts.get(i)));
                continue;
            }
            if (words.equals(DISCARD_ALL) || words.equals(DEALLOCATE_ALL) || words.equals(DEALLOCATE_PREPARE_ALL)) return true;
            words.clear();
        }
        return false;
    }

    private static final List<String> DISCARD_ALL = List.of("discard", "all"), DEALLOCATE_ALL = List.of("deallocate", "all"),
            DEALLOCATE_PREPARE_ALL = List.of("deallocate", "prepare", "all");

    // --- one pass over the tokens: the common case (every update's request at every site runs this) ---------------
    // It answers as the text-based reading below would, or "changes" where that one would not (never the other way):
    // no dollar-quoted body (read as text there) and nothing unterminated, or the text-based reading decides.

    private static boolean plain(List<SqlLexer.Token> ts) {
        for (SqlLexer.Token t : ts) if (t.kind() == SqlLexer.Kind.DOLLAR_STRING || t.unterminated()) return false;
        return true;
    }

    private static boolean statementChangesSession(String sql, List<SqlLexer.Token> ts, int from, int to) {
        int first = nextSignificant(ts, from, to);
        if (first < 0) return false;
        String w1 = lower(sql, ts.get(first));
        if (SESSION_COMMANDS.contains(w1)) return true;
        if (w1.equals("set")) {
            int second = nextSignificant(ts, first + 1, to);
            String w2 = second < 0 ? "" : lower(sql, ts.get(second));
            // a word glued to what follows ("local=") is not the keyword: take it as a session SET
            boolean glued = second >= 0 && second + 1 < to && ts.get(second + 1).significant() && !ts.get(second + 1).is(sql, "(");
            if (glued || !w2.equals("local") && !w2.equals("transaction") && !w2.equals("constraints")) return true;
        }
        boolean declare = w1.equals("declare");
        for (int i = first; i < to; i++) {
            SqlLexer.Token t = ts.get(i);
            if (!t.word() && t.kind() != SqlLexer.Kind.QUOTED_IDENT) continue;
            List<String> runs = wordRuns(lower(sql, t));
            for (String r : runs) if (r.equals("temp") || r.equals("temporary") || r.equals("pg_temp")) return true;
            if (t.kind() == SqlLexer.Kind.QUOTED_IDENT) continue;   // its closing quote stands between a name and "("
            String last = runs.isEmpty() ? "" : runs.get(runs.size() - 1);
            int next = nextSignificant(ts, i + 1, to);
            boolean call = next >= 0 && ts.get(next).is(sql, "(");
            if (call && SESSION_LOCKS.contains(last)) return true;
            if (call && last.equals("set_config") && !localSetConfig(sql, ts, next + 1, to)) return true;
            if (declare && last.equals("with") && next >= 0 && (ts.get(next).word() || ts.get(next).kind() == SqlLexer.Kind.QUOTED_IDENT)) {
                List<String> after = wordRuns(lower(sql, ts.get(next)));
                if (!after.isEmpty() && after.get(0).equals("hold")) return true;
            }
        }
        return false;
    }

    private static final Set<String> SESSION_LOCKS = Set.of("pg_advisory_lock", "pg_try_advisory_lock", "pg_advisory_lock_shared", "pg_try_advisory_lock_shared");

    /** Whether the call's arguments, from just after its '(', are three with the third the keyword true. */
    private static boolean localSetConfig(String sql, List<SqlLexer.Token> ts, int from, int to) {
        int depth = 0, args = 0, inThird = 0;
        boolean thirdIsTrue = false;
        for (int i = from; i < to; i++) {
            SqlLexer.Token t = ts.get(i);
            if (!t.significant()) continue;
            if (t.is(sql, "(")) depth++;
            else if (t.is(sql, ")") && depth-- == 0) return args == 2 && inThird == 1 && thirdIsTrue;
            else if (t.is(sql, ",") && depth == 0) {
                args++;
                continue;
            }
            if (args == 2) {
                inThird++;
                thirdIsTrue = t.word() && lower(sql, t).equals("true");
            }
        }
        return false;   // no closing parenthesis: cannot tell
    }

    private static int nextSignificant(List<SqlLexer.Token> ts, int from, int to) {
        for (int i = from; i < to; i++) if (ts.get(i).significant()) return i;
        return -1;
    }

    /** A token's text in lower case (a quoted identifier with its quotes). */
    private static String lower(String sql, SqlLexer.Token t) { return t.text(sql).toLowerCase(Locale.ROOT); }

    /** The runs of [a-z0-9_] in a lower-cased word: what a regular expression's word boundaries see. */
    private static List<String> wordRuns(String w) {
        List<String> out = new java.util.ArrayList<>(1);
        int start = -1;
        for (int i = 0; i <= w.length(); i++) {
            char c = i < w.length() ? w.charAt(i) : ' ';
            boolean word = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_';
            if (word && start < 0) start = i;
            else if (!word && start >= 0) {
                out.add(start == 0 && i == w.length() ? w : w.substring(start, i));
                start = -1;
            }
        }
        return out;
    }

    // --- the same, read from each statement's normalized text (dollar-quoted bodies, unterminated texts) ------------

    static boolean changesSessionStateByText(String sql) {
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

    static boolean discardsStatementsByText(String sql) {
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
