package org.wanrep.sql;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The one tokenizer of SQL text in the middleware, following PostgreSQL's lexer (scan.l, with
 * standard_conforming_strings on, the default since 9.1): every scanner that splits, normalizes,
 * rewrites or inspects SQL text uses it, so all of them agree where a literal, a quoted identifier,
 * a dollar-quoted string or a comment begins and ends.
 *
 * <ul>
 * <li>identifiers start with a letter, {@code _} or a non-ASCII character and go on with those,
 *     digits and {@code $}; unquoted ones fold to lower case (ASCII only, as PostgreSQL does for
 *     multi-byte encodings); {@code "..."} and {@code U&"..."} with {@code ""} for a quote;</li>
 * <li>strings {@code '...'} with {@code ''} (backslash is an ordinary character), {@code E'...'}
 *     where a backslash escapes the next character, {@code B'...'}, {@code X'...'},
 *     {@code N'...'}, {@code U&'...'}; the prefix is part of the token only at a token start
 *     ({@code abe'x'} is the identifier {@code abe} and a string);</li>
 * <li>{@code $tag$ ... $tag$} and {@code $$ ... $$} (a tag starts with a letter or {@code _}, so
 *     {@code $1} is a parameter and {@code $1$} is not a tag); a {@code $} inside an identifier
 *     ({@code a$b$}) starts nothing;</li>
 * <li>{@code --} comments to the end of the line (the end of the text ends one too),
 *     {@code /* *}{@code /} comments nested as PostgreSQL nests them;</li>
 * <li>numbers, operators (a run of operator characters, cut before {@code --} or {@code /*}, and a
 *     trailing {@code +}/{@code -} dropped unless the operator holds one of {@code ~!@#%^&|`?}),
 *     punctuation ({@code ( ) [ ] , : :: := => .. .}), {@code ;}, whitespace.</li>
 * </ul>
 * Tokens carry positions into the original text, so a rewriter can copy everything it does not
 * change verbatim. A quote, quoted identifier, dollar quote or block comment that does not end is
 * one last token marked {@link Token#unterminated()} (PostgreSQL refuses such a text): callers
 * must then act conservatively (one statement, analysed as unknown, every table locked).
 */
public final class SqlLexer {
    private SqlLexer() {}

    public enum Kind {
        /** Spaces, tabs, newlines, carriage returns, form feeds, vertical tabs. */
        SPACE,
        /** A {@code --} or (possibly nested) block comment. */
        COMMENT,
        /** An unquoted identifier that is not a reserved keyword. */
        IDENT,
        /** A reserved keyword of PostgreSQL (SELECT, FROM, ...): never an unquoted name. */
        KEYWORD,
        /** {@code "..."} or {@code U&"..."}. */
        QUOTED_IDENT,
        /** {@code '...'}, with its prefix (E, B, X, N, U&) if any. */
        STRING,
        /** {@code $tag$ ... $tag$}. */
        DOLLAR_STRING,
        NUMBER,
        /** {@code $1}, {@code $2}, ... */
        PARAM,
        OPERATOR,
        /** {@code ( ) [ ] , : :: := => .. .} */
        PUNCT,
        SEMICOLON,
        /** Anything else (a lone {@code $}, a backslash, braces): PostgreSQL refuses it outside literals. */
        OTHER
    }

    /** One token: {@code sql.substring(start, end)}. */
    public record Token(Kind kind, int start, int end, boolean unterminated) {
        public String text(String sql) { return sql.substring(start, end); }

        /** Neither white space nor a comment. */
        public boolean significant() { return kind != Kind.SPACE && kind != Kind.COMMENT; }

        /** An unquoted identifier or keyword. */
        public boolean word() { return kind == Kind.IDENT || kind == Kind.KEYWORD; }

        /** Whether this is the punctuation, operator or semicolon {@code p}. */
        public boolean is(String sql, String p) {
            return (kind == Kind.PUNCT || kind == Kind.OPERATOR || kind == Kind.SEMICOLON) && end - start == p.length() && sql.startsWith(p, start);
        }

        /**
         * The name an identifier stands for: unquoted ones folded to lower case, quoted ones as
         * written with {@code ""} read as one quote (U&amp; escapes are left as written).
         */
        public String identifier(String sql) {
            if (kind == Kind.QUOTED_IDENT) {
                int from = sql.charAt(start) == '"' ? start + 1 : start + 3;
                int to = unterminated ? end : end - 1;
                return sql.substring(from, Math.max(from, to)).replace("\"\"", "\"");
            }
            return fold(text(sql));
        }

        /** For a dollar-quoted string: where its body starts and ends (between the tags). */
        public int bodyStart(String sql) { return sql.indexOf('$', start + 1) + 1; }

        public int bodyEnd(String sql) { return unterminated ? end : end - (bodyStart(sql) - start); }
    }

    /** PostgreSQL's reserved keywords (appendix C, "reserved"): they never name a column, table or function. */
    private static final Set<String> RESERVED = Set.of("all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric",
            "both", "case", "cast", "check", "collate", "column", "constraint", "create", "current_catalog", "current_date",
            "current_role", "current_time", "current_timestamp", "current_user", "default", "deferrable", "desc", "distinct", "do",
            "else", "end", "except", "false", "fetch", "for", "foreign", "from", "grant", "group", "having", "in", "initially",
            "intersect", "into", "lateral", "leading", "limit", "localtime", "localtimestamp", "not", "null", "offset", "on", "only",
            "or", "order", "placing", "primary", "references", "returning", "select", "session_user", "some", "symmetric",
            "system_user", "table", "then", "to", "trailing", "true", "union", "unique", "user", "using", "variadic", "when", "where",
            "window", "with");

    /** The reserved keywords by their first letter: the lookup runs for every word and allocates nothing. */
    private static final String[][] RESERVED_BY_LETTER = new String[26][];
    static {
        for (char c = 'a'; c <= 'z'; c++) {
            final char f = c;
            RESERVED_BY_LETTER[c - 'a'] = RESERVED.stream().filter(w -> w.charAt(0) == f).toArray(String[]::new);
        }
    }

    private static boolean reserved(String s, int i, int j) {
        int c = s.charAt(i) | 0x20;
        if (c < 'a' || c > 'z' || j - i < 2 || j - i > 17) return false;
        for (String w : RESERVED_BY_LETTER[c - 'a']) if (w.length() == j - i && asciiFoldedEquals(s, i, w)) return true;
        return false;
    }

    /**
     * Whether {@code lower} (lower-case ASCII) is at {@code s[i]}, ASCII letters folded: only they fold
     * (regionMatches(true, ...) would also take the Kelvin sign for k). {@code s} must have the room.
     */
    public static boolean asciiFoldedEquals(String s, int i, String lower) {
        for (int k = 0; k < lower.length(); k++) {
            char c = s.charAt(i + k);
            if (c >= 'A' && c <= 'Z') c = (char) (c + 32);
            if (c != lower.charAt(k)) return false;
        }
        return true;
    }

    /** ASCII lower case, as PostgreSQL folds unquoted identifiers. */
    public static String fold(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= 'A' && c <= 'Z') return s.toLowerCase(Locale.ROOT);
        }
        return s;
    }

    /** Whether any token of {@code tokens} runs to the end of the text without its closing quote or comment end. */
    public static boolean unterminated(List<Token> tokens) {
        return !tokens.isEmpty() && tokens.get(tokens.size() - 1).unterminated();
    }

    /** Whether {@code sql} has a quote, quoted identifier, dollar quote or block comment that does not end. */
    public static boolean unterminated(String sql) { return unterminated(tokens(sql)); }

    /**
     * The tokens of {@code sql}, covering it from start to end without gaps (unmodifiable). A session reads
     * one request's text several times (its shape, its statements, time functions, session commands, its log),
     * often as equal strings built anew (a message's text is decoded at each read), so the last few texts lexed
     * on this thread are kept with their tokens: a text equal to one of them is not lexed again.
     */
    public static List<Token> tokens(String sql) {
        List<Token> ts = RECENT.get(sql);
        if (ts != null) return ts;
        ts = java.util.Collections.unmodifiableList(tokens(sql, 0, sql.length()));
        RECENT.put(sql, ts);
        return ts;
    }

    private static final RecentTexts<List<Token>> RECENT = new RecentTexts<>(4);

    /** The tokens of {@code sql.substring(from, to)}, with positions into {@code sql} (for a dollar-quoted body read as code). */
    public static List<Token> tokens(String sql, int from, int to) {
        List<Token> out = new ArrayList<>();
        int i = from;
        while (i < to) {
            Token t = next(sql, i, to);
            out.add(t);
            i = t.end();
        }
        return out;
    }

    private static Token next(String s, int i, int n) {
        char c = s.charAt(i);
        char d = i + 1 < n ? s.charAt(i + 1) : '\0';
        if (space(c)) {
            int j = i + 1;
            while (j < n && space(s.charAt(j))) j++;
            return new Token(Kind.SPACE, i, j, false);
        }
        if (c == '-' && d == '-') {
            int j = i + 2;
            while (j < n && s.charAt(j) != '\n' && s.charAt(j) != '\r') j++;
            return new Token(Kind.COMMENT, i, j, false);
        }
        if (c == '/' && d == '*') return blockComment(s, i, n);
        if (c == '\'') return string(s, i, i, n, false);
        if ((c == 'e' || c == 'E') && d == '\'') return string(s, i, i + 1, n, true);
        if ((c == 'b' || c == 'B' || c == 'x' || c == 'X' || c == 'n' || c == 'N') && d == '\'') return string(s, i, i + 1, n, false);
        if ((c == 'u' || c == 'U') && d == '&' && i + 2 < n) {
            char q = s.charAt(i + 2);
            if (q == '\'') return string(s, i, i + 2, n, false);   // U&'...': backslash escapes are \XXXX, a quote is only doubled
            if (q == '"') return quoted(s, i, i + 2, n);
        }
        if (c == '"') return quoted(s, i, i, n);
        if (c == '$') {
            if (digit(d)) {
                int j = i + 1;
                while (j < n && digit(s.charAt(j))) j++;
                return new Token(Kind.PARAM, i, j, false);
            }
            int k = i + 1;
            if (k < n && identStart(s.charAt(k))) {
                k++;
                while (k < n && (identStart(s.charAt(k)) || digit(s.charAt(k)))) k++;
            }
            if (k < n && s.charAt(k) == '$') {
                String tag = s.substring(i, k + 1);
                int end = s.indexOf(tag, k + 1);
                if (end < 0 || end + tag.length() > n) return new Token(Kind.DOLLAR_STRING, i, n, true);
                return new Token(Kind.DOLLAR_STRING, i, end + tag.length(), false);
            }
            return new Token(Kind.OTHER, i, i + 1, false);
        }
        if (identStart(c)) {
            int j = i + 1;
            while (j < n && identCont(s.charAt(j))) j++;
            return new Token(reserved(s, i, j) ? Kind.KEYWORD : Kind.IDENT, i, j, false);
        }
        if (digit(c) || c == '.' && digit(d)) return number(s, i, n);
        if (c == ';') return new Token(Kind.SEMICOLON, i, i + 1, false);
        if (c == '(' || c == ')' || c == '[' || c == ']' || c == ',') return new Token(Kind.PUNCT, i, i + 1, false);
        if (c == ':') return new Token(Kind.PUNCT, i, d == ':' || d == '=' ? i + 2 : i + 1, false);
        if (c == '.') return new Token(Kind.PUNCT, i, d == '.' ? i + 2 : i + 1, false);
        if (c == '=' && d == '>') return new Token(Kind.PUNCT, i, i + 2, false);
        if (opChar(c)) return operator(s, i, n);
        int j = Character.isHighSurrogate(c) && i + 1 < n ? i + 2 : i + 1;
        return new Token(Kind.OTHER, i, j, false);
    }

    private static Token blockComment(String s, int i, int n) {
        int depth = 1, j = i + 2;
        while (j < n) {
            char c = s.charAt(j);
            if (c == '/' && j + 1 < n && s.charAt(j + 1) == '*') { depth++; j += 2; }
            else if (c == '*' && j + 1 < n && s.charAt(j + 1) == '/') {
                j += 2;
                if (--depth == 0) return new Token(Kind.COMMENT, i, j, false);
            } else j++;
        }
        return new Token(Kind.COMMENT, i, n, true);
    }

    /** A string literal whose opening quote is at {@code q} (the token starts at {@code i}, before its prefix). */
    private static Token string(String s, int i, int q, int n, boolean escapes) {
        int j = q + 1;
        while (j < n) {
            char c = s.charAt(j);
            if (escapes && c == '\\') { j += 2; continue; }
            if (c == '\'') {
                if (j + 1 < n && s.charAt(j + 1) == '\'') { j += 2; continue; }
                return new Token(Kind.STRING, i, j + 1, false);
            }
            j++;
        }
        return new Token(Kind.STRING, i, n, true);
    }

    private static Token quoted(String s, int i, int q, int n) {
        int j = q + 1;
        while (j < n) {
            if (s.charAt(j) == '"') {
                if (j + 1 < n && s.charAt(j + 1) == '"') { j += 2; continue; }
                return new Token(Kind.QUOTED_IDENT, i, j + 1, false);
            }
            j++;
        }
        return new Token(Kind.QUOTED_IDENT, i, n, true);
    }

    private static Token number(String s, int i, int n) {
        int j = i;
        if (s.charAt(i) == '0' && i + 2 < n && "xXoObB".indexOf(s.charAt(i + 1)) >= 0 && hexDigit(s.charAt(i + 2))) {   // 0x1F, 0o17, 0b101 (PostgreSQL 16)
            j = i + 2;
            while (j < n && (hexDigit(s.charAt(j)) || s.charAt(j) == '_')) j++;
            return new Token(Kind.NUMBER, i, j, false);
        }
        while (j < n && (digit(s.charAt(j)) || s.charAt(j) == '_' && j + 1 < n && digit(s.charAt(j + 1)))) j++;
        if (j < n && s.charAt(j) == '.' && !(j + 1 < n && s.charAt(j + 1) == '.')) {   // 1..2 is 1 and ".."
            j++;
            while (j < n && digit(s.charAt(j))) j++;
        }
        if (j < n && (s.charAt(j) == 'e' || s.charAt(j) == 'E')) {
            int k = j + 1;
            if (k < n && (s.charAt(k) == '+' || s.charAt(k) == '-')) k++;
            if (k < n && digit(s.charAt(k))) {
                j = k;
                while (j < n && digit(s.charAt(j))) j++;
            }
        }
        return new Token(Kind.NUMBER, i, j, false);
    }

    private static Token operator(String s, int i, int n) {
        int j = i + 1;
        while (j < n && opChar(s.charAt(j))) {
            char c = s.charAt(j);
            char d = j + 1 < n ? s.charAt(j + 1) : '\0';
            if (c == '-' && d == '-' || c == '/' && d == '*') break;   // a comment starts inside the run
            j++;
        }
        if (j - i > 1) {
            boolean special = false;
            for (int k = i; k < j; k++) if ("~!@#%^&|`?".indexOf(s.charAt(k)) >= 0) { special = true; break; }
            if (!special) while (j - i > 1 && (s.charAt(j - 1) == '+' || s.charAt(j - 1) == '-')) j--;
        }
        return new Token(Kind.OPERATOR, i, j, false);
    }

    /** The white space PostgreSQL's lexer skips (a {@link Kind#SPACE}). */
    public static boolean space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\u000B'; }

    private static boolean digit(char c) { return c >= '0' && c <= '9'; }

    private static boolean hexDigit(char c) { return digit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'; }

    private static boolean identStart(char c) { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80; }

    private static boolean identCont(char c) { return identStart(c) || digit(c) || c == '$'; }

    private static boolean opChar(char c) { return "+-*/<>=~!@#%^&|`?".indexOf(c) >= 0; }
}
