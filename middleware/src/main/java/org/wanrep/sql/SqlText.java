package org.wanrep.sql;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Lexical helpers over SQL text that skip literals, quoted identifiers and comments: a cache key
 * with literals replaced (texts that differ only in their constants lock the same tables), and the
 * names of the functions a statement calls.
 */
public final class SqlText {
    private SqlText() {}

    /** Words that precede a parenthesis without being functions. */
    private static final Set<String> NOT_FUNCTIONS = Set.of("in", "values", "exists", "any", "all", "some", "array", "row", "cast", "over",
            "filter", "within", "as", "on", "using", "and", "or", "not", "select", "from", "where", "set", "into", "join", "conflict", "do",
            "update", "key", "group", "order", "partition", "by", "lateral", "table", "case", "when", "then", "else", "coalesce", "nullif",
            "greatest", "least", "extract", "position", "substring", "overlay", "trim", "interval", "numeric", "decimal", "varchar", "char",
            "character", "timestamp", "time", "bit", "float", "double", "precision", "with", "returning", "is", "like", "ilike", "between",
            "limit", "offset", "having", "union", "except", "intersect", "distinct", "only", "default", "collate", "similar", "to", "escape",
            "varying", "window", "rows", "range", "groups", "grouping", "cube", "rollup", "sets", "xmlelement", "xmlattributes", "delete",
            "insert", "merge", "matched", "nothing", "recursive", "materialized", "tablesample", "repeatable", "for", "share", "nowait",
            "skip", "locked", "of", "asc", "desc", "nulls", "first", "last", "fetch", "next", "ties", "zone", "at", "local", "current", "if");

    /** Words whose parenthesis may be followed by a column-alias list: FROM (subquery) s(a), FROM coalesce(...) c(a). */
    private static final Set<String> ALIASABLE_AFTER = Set.of("from", "join", "lateral", "coalesce", "nullif", "greatest", "least");

    /**
     * Whether {@code word} (lower-case ASCII) occurs anywhere in {@code s}, in any case: a cheap necessary condition
     * before lexing. It folds at least as much as {@code toLowerCase(Locale.ROOT)} does, so wherever a lower-cased
     * token or text reads as the word, this finds it.
     */
    public static boolean containsIgnoreCase(String s, String word) {
        int len = word.length();
        if (len == 0) return true;
        // an ASCII character can begin the word only as its first letter in either case: most positions need no
        // regionMatches call (any other character may fold to the letter, the Kelvin sign to k: those are compared)
        char w0 = word.charAt(0);
        boolean letter = (w0 | 0x20) >= 'a' && (w0 | 0x20) <= 'z';
        int lw0 = letter ? w0 | 0x20 : w0;
        for (int i = 0, n = s.length() - len; i <= n; i++) {
            char c = s.charAt(i);
            if (c < 128 && w0 < 128 && (letter ? c | 0x20 : c) != lw0) continue;
            if (s.regionMatches(true, i, word, 0, len)) return true;
        }
        return false;
    }

    /**
     * The text with string and numeric literals replaced by '?' (for caching analyses): texts that
     * differ only in their constants lock the same tables. Quoted identifiers, comments and
     * dollar-quoted bodies are kept verbatim (a digit in {@code "t 1"} names a table); a text this
     * cannot read with certainty (an unterminated quote) is returned unchanged.
     */
    public static String normalize(String sql) { return normalize(sql, null); }

    /**
     * As {@link #normalize(String)}, adding to {@code literals} (when given) each literal the text
     * replaced, in order, as written ({@code 'it''s'}, {@code 42}); null for one that is not plain
     * (an E'' or other prefixed string, a number with a fraction, exponent or suffix), so no key is
     * read from it. An unchanged text (one this cannot read) adds nothing.
     */
    public static String normalize(String sql, List<String> literals) {
        // a statement's text is normalized three times (its request's shape, its statement's, its function calls')
        Normalized known = NORMALIZED.get(sql);
        if (known == null) {
            List<String> found = new java.util.ArrayList<>();
            known = new Normalized(normalizeText(sql, found), found);
            NORMALIZED.put(sql, known);
        }
        if (literals != null) literals.addAll(known.literals());
        return known.shape();
    }

    /** A text's shape and the literals it replaced. */
    private record Normalized(String shape, List<String> literals) {}

    private static final RecentTexts<Normalized> NORMALIZED = new RecentTexts<>(4);

    private static String normalizeText(String sql, List<String> literals) {
        List<SqlLexer.Token> tokens = SqlLexer.tokens(sql);
        if (SqlLexer.unterminated(tokens)) return sql;
        StringBuilder b = new StringBuilder(sql.length());
        for (int i = 0; i < tokens.size(); i++) {
            SqlLexer.Token t = tokens.get(i);
            if (t.kind() == SqlLexer.Kind.STRING || t.kind() == SqlLexer.Kind.NUMBER) {
                b.append('?');   // E'', B'', X'' with their prefix
                if (literals != null) literals.add(plainLiteral(sql, t, i + 1 < tokens.size() ? tokens.get(i + 1) : null));
            } else b.append(sql, t.start(), t.end());
        }
        return b.toString();
    }

    /** The literal as written if it is a plain string or a whole number not glued to what follows, else null. */
    private static String plainLiteral(String sql, SqlLexer.Token t, SqlLexer.Token next) {
        String text = sql.substring(t.start(), t.end());
        boolean glued = next != null && next.start() == t.end() && next.kind() != SqlLexer.Kind.SPACE
                && (next.kind() == SqlLexer.Kind.IDENT || next.kind() == SqlLexer.Kind.KEYWORD || sql.charAt(next.start()) == '.');
        if (t.kind() == SqlLexer.Kind.STRING) return text.startsWith("'") ? text : null;
        for (int k = 0; k < text.length(); k++) if (!Character.isDigit(text.charAt(k))) return null;
        return glued ? null : text;
    }

    /**
     * Lower-case names of the functions called in {@code sql} (schema-qualified calls keep the schema).
     * A column-alias list is not a call: {@code f(5) AS l(a char(15))}, {@code f(1) l(a int)},
     * {@code (SELECT ...) s(x)} (an identifier after AS, or after the closing parenthesis of a
     * function call or of a parenthesis opened right after FROM/JOIN/LATERAL/comma).
     */
    public static Set<String> functionCalls(String sql) {
        // the bodies of dollar-quoted strings are read as code too: a DO block's or function's calls count
        List<SqlLexer.Token> ts = new ArrayList<>();
        for (SqlLexer.Token t : SqlLexer.tokens(sql)) flatten(sql, t, ts);
        Set<String> out = new LinkedHashSet<>();
        // per open parenthesis: whether an identifier right after its ')' would name an alias list
        ArrayDeque<Boolean> opened = new ArrayDeque<>();
        boolean aliasAfter = false;   // the previous token is a ')' that may be followed by an alias list
        for (int k = 0; k < ts.size(); k++) {
            SqlLexer.Token t = ts.get(k);
            if (t.is(sql, "(")) {
                SqlLexer.Token p = previous(ts, k);
                opened.push(p != null && p.is(sql, ",") || ALIASABLE_AFTER.contains(previousWord(sql, ts, k)));
                aliasAfter = false;
                continue;
            }
            if (t.is(sql, ")")) {
                aliasAfter = !opened.isEmpty() && opened.pop();
                continue;
            }
            if (!(t.word() || t.kind() == SqlLexer.Kind.QUOTED_IDENT)) {
                aliasAfter = false;
                continue;
            }
            // a possibly qualified name: part (. part)*
            int first = k, last = k;
            StringBuilder name = new StringBuilder(t.identifier(sql));
            while (true) {
                int dot = nextSignificant(ts, last + 1);
                if (dot < 0 || !ts.get(dot).is(sql, ".")) break;
                int part = nextSignificant(ts, dot + 1);
                if (part < 0 || !(ts.get(part).word() || ts.get(part).kind() == SqlLexer.Kind.QUOTED_IDENT)) break;
                name.append('.').append(ts.get(part).identifier(sql));
                last = part;
            }
            String word = name.toString();
            int after = nextSignificant(ts, last + 1);
            boolean paren = after >= 0 && ts.get(after).is(sql, "(");
            SqlLexer.Token before = previous(ts, first);
            boolean cast = before != null && before.is(sql, "::");
            String bare = word.substring(word.lastIndexOf('.') + 1);
            boolean aliasList = paren && (previousWord(sql, ts, first).equals("as") || aliasAfter);
            String prev = previousWord(sql, ts, first);
            boolean into = prev.equals("into") || prev.equals("table") || prev.equals("update") || prev.equals("only");   // INSERT INTO t(a, b)
            boolean call = paren && !cast && !aliasList && !NOT_FUNCTIONS.contains(bare) && !into;
            if (call) out.add(word);
            aliasAfter = false;
            if (paren) {   // its parenthesis: a call's ')' may be followed by an alias list
                opened.push(call || ALIASABLE_AFTER.contains(word));
                k = after;
            } else k = last;
        }
        return out;
    }

    /** Code tokens: literals and comments left out, dollar-quoted bodies read as code. */
    private static void flatten(String sql, SqlLexer.Token t, List<SqlLexer.Token> out) {
        switch (t.kind()) {
            case SPACE, COMMENT, STRING -> { }
            case DOLLAR_STRING -> { for (SqlLexer.Token u : SqlLexer.tokens(sql, t.bodyStart(sql), t.bodyEnd(sql))) flatten(sql, u, out); }
            default -> out.add(t);
        }
    }

    private static SqlLexer.Token previous(List<SqlLexer.Token> ts, int k) { return k > 0 ? ts.get(k - 1) : null; }

    private static int nextSignificant(List<SqlLexer.Token> ts, int k) { return k < ts.size() ? k : -1; }

    /** The lower-case unquoted word right before token {@code k}, or "" (also for a qualified one's last part). */
    private static String previousWord(String sql, List<SqlLexer.Token> ts, int k) {
        SqlLexer.Token p = previous(ts, k);
        if (p == null || !p.word()) return "";
        SqlLexer.Token pp = previous(ts, k - 1);
        if (pp != null && pp.is(sql, ".")) return "";
        return p.identifier(sql);
    }
}
