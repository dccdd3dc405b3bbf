package org.wanrep.sql;

import java.util.LinkedHashSet;
import java.util.Locale;
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
     * read from it. An unchanged text (one this cannot read) leaves the list as it was.
     */
    public static String normalize(String sql, java.util.List<String> literals) {
        int before = literals == null ? 0 : literals.size();
        String out = normalizeInto(sql, literals);
        if (out == sql && literals != null) literals.subList(before, literals.size()).clear();
        return out;
    }

    private static boolean identChar(char c) { return Character.isLetterOrDigit(c) || c == '_' || c == '$'; }

    private static String normalizeInto(String sql, java.util.List<String> literals) {
        StringBuilder b = new StringBuilder(sql.length());
        int n = sql.length();
        for (int i = 0; i < n; i++) {
            char c = sql.charAt(i);
            if (c == '\'') {
                boolean escapes = i > 0 && (sql.charAt(i - 1) == 'E' || sql.charAt(i - 1) == 'e')
                        && (i == 1 || !Character.isLetterOrDigit(sql.charAt(i - 2)) && sql.charAt(i - 2) != '_');
                int j = i + 1;
                while (j < n) {
                    char d = sql.charAt(j);
                    if (escapes && d == '\\') { j += 2; continue; }
                    if (d == '\'') {
                        if (j + 1 < n && sql.charAt(j + 1) == '\'') { j += 2; continue; }
                        break;
                    }
                    j++;
                }
                if (j >= n) return sql;
                if (escapes) b.setLength(b.length() - 1);   // the E prefix goes with the literal
                // a prefix (E, B, X, N, U&) or anything glued to the quote: not a plain string
                if (literals != null) literals.add(escapes || (i > 0 && (identChar(sql.charAt(i - 1)) || sql.charAt(i - 1) == '&')) ? null : sql.substring(i, j + 1));
                b.append('?');
                i = j;
            } else if (c == '"') {
                int j = sql.indexOf('"', i + 1);
                while (j > 0 && j + 1 < n && sql.charAt(j + 1) == '"') j = sql.indexOf('"', j + 2);
                if (j < 0) return sql;
                b.append(sql, i, j + 1);
                i = j;
            } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
                int j = sql.indexOf('\n', i);
                if (j < 0) j = n - 1;
                b.append(sql, i, j + 1);
                i = j;
            } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                int j = sql.indexOf("*/", i + 2);
                if (j < 0) return sql;
                b.append(sql, i, j + 2);
                i = j + 1;
            } else if (c == '$' && (i == 0 || !Character.isLetterOrDigit(sql.charAt(i - 1)) && sql.charAt(i - 1) != '_')) {
                int k = i + 1;
                while (k < n && (Character.isLetterOrDigit(sql.charAt(k)) || sql.charAt(k) == '_')) k++;
                if (k < n && sql.charAt(k) == '$' && (k == i + 1 || !Character.isDigit(sql.charAt(i + 1)))) {   // $tag$, not $1
                    String tag = sql.substring(i, k + 1);
                    int j = sql.indexOf(tag, k + 1);
                    if (j < 0) return sql;
                    b.append(sql, i, j + tag.length());
                    i = j + tag.length() - 1;
                } else b.append(c);
            } else if (Character.isDigit(c) && (i == 0 || !Character.isLetterOrDigit(sql.charAt(i - 1)) && sql.charAt(i - 1) != '_' && sql.charAt(i - 1) != '$')) {
                int j = i;
                while (j < n && (Character.isDigit(sql.charAt(j)) || sql.charAt(j) == '.')) j++;
                if (literals != null) {
                    String t = sql.substring(i, j);
                    literals.add(t.indexOf('.') >= 0 || (j < n && (identChar(sql.charAt(j)) || sql.charAt(j) == '.')) ? null : t);
                }
                b.append('?');
                i = j - 1;
            } else b.append(c);
        }
        return b.toString();
    }

    /**
     * Lower-case names of the functions called in {@code sql} (schema-qualified calls keep the schema).
     * A column-alias list is not a call: {@code f(5) AS l(a char(15))}, {@code f(1) l(a int)},
     * {@code (SELECT ...) s(x)} (an identifier after AS, or after the closing parenthesis of a
     * function call or of a parenthesis opened right after FROM/JOIN/LATERAL/comma).
     */
    public static Set<String> functionCalls(String sql) {
        Set<String> out = new LinkedHashSet<>();
        int n = sql.length();
        int i = 0;
        // per open parenthesis: whether an identifier right after its ')' would name an alias list
        java.util.ArrayDeque<Boolean> opened = new java.util.ArrayDeque<>();
        int aliasAfter = -1;   // index just past a ')' that may be followed by an alias list
        while (i < n) {
            char c = sql.charAt(i);
            if (c == '\'' || c == '"') {   // literals and quoted identifiers
                // E'...\'...': a backslash escapes the quote (read as a closing quote, a call after it would be missed)
                boolean escapes = c == '\'' && i > 0 && (sql.charAt(i - 1) == 'E' || sql.charAt(i - 1) == 'e')
                        && (i == 1 || !Character.isLetterOrDigit(sql.charAt(i - 2)) && sql.charAt(i - 2) != '_');
                int j = i + 1;
                while (j < n && sql.charAt(j) != c) j += escapes && sql.charAt(j) == '\\' ? 2 : 1;
                i = j + 1;
                continue;
            }
            if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') { int j = sql.indexOf('\n', i); i = j < 0 ? n : j + 1; continue; }
            if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') { int j = sql.indexOf("*/", i + 2); i = j < 0 ? n : j + 2; continue; }
            if (c == '(') {
                opened.push(previousChar(sql, i) == ',' || ALIASABLE_AFTER.contains(previousWord(sql, i)));
                i++;
                continue;
            }
            if (c == ')') {
                boolean alias = !opened.isEmpty() && opened.pop();
                aliasAfter = alias ? i + 1 : -1;
                i++;
                continue;
            }
            if (Character.isLetter(c) || c == '_') {
                int j = i;
                while (j < n && (Character.isLetterOrDigit(sql.charAt(j)) || sql.charAt(j) == '_' || sql.charAt(j) == '.' || sql.charAt(j) == '$')) j++;
                String word = sql.substring(i, j).toLowerCase(Locale.ROOT);
                int k = j;
                while (k < n && Character.isWhitespace(sql.charAt(k))) k++;
                boolean cast = i >= 2 && sql.charAt(i - 1) == ':' && sql.charAt(i - 2) == ':';
                String bare = word.substring(word.lastIndexOf('.') + 1);
                boolean paren = k < n && sql.charAt(k) == '(';
                boolean aliasList = paren && (previousWord(sql, i).equals("as") || aliasAfter >= 0 && sql.substring(aliasAfter, i).isBlank());
                boolean call = paren && !cast && !aliasList && !NOT_FUNCTIONS.contains(bare) && !precededByInto(sql, i);
                if (call) out.add(word);
                if (paren) {   // its parenthesis: a call's ')' may be followed by an alias list
                    opened.push(call || ALIASABLE_AFTER.contains(word));
                    i = k + 1;
                } else i = j;
                continue;
            }
            i++;
        }
        return out;
    }

    /** The lower-case word ending right before {@code i} (whitespace skipped), or "" if a non-letter comes first. */
    private static String previousWord(String sql, int i) {
        int k = i - 1;
        while (k >= 0 && Character.isWhitespace(sql.charAt(k))) k--;
        int end = k + 1;
        while (k >= 0 && (Character.isLetterOrDigit(sql.charAt(k)) || sql.charAt(k) == '_')) k--;
        if (k >= 0 && (sql.charAt(k) == '.' || sql.charAt(k) == '"' || sql.charAt(k) == '$')) return "";
        return sql.substring(k + 1, end).toLowerCase(Locale.ROOT);
    }

    private static char previousChar(String sql, int i) {
        int k = i - 1;
        while (k >= 0 && Character.isWhitespace(sql.charAt(k))) k--;
        return k >= 0 ? sql.charAt(k) : ' ';
    }

    /** INSERT INTO t(a, b): the table's column list is not a call. */
    private static boolean precededByInto(String sql, int i) {
        int k = i - 1;
        while (k >= 0 && Character.isWhitespace(sql.charAt(k))) k--;
        int end = k + 1;
        while (k >= 0 && Character.isLetter(sql.charAt(k))) k--;
        String prev = sql.substring(k + 1, end).toLowerCase(Locale.ROOT);
        return prev.equals("into") || prev.equals("table") || prev.equals("update") || prev.equals("only");
    }
}
