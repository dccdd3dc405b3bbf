package org.wanrep.sql;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * For row locks from the extended protocol: the statement text with each {@code $n} replaced by
 * the value bound to it, as a standard string literal, so that {@link RowKeys} sees the key values
 * a simple query would show. Only for deriving locks (execution still uses Parse/Bind), and only
 * when certain: every bound value in text format, none NULL, none with a backslash or a quote
 * problem, every {@code $n} bound, and a text this scanner reads to its end (quotes, quoted
 * identifiers, dollar quotes, line and nested block comments); otherwise null, and the caller
 * keeps the table-level locks of the text with parameters. Pure: ClientSession may call it with
 * the Parse text and the Bind message's values and format codes.
 */
public final class BoundParameters {
    private BoundParameters() {}

    /**
     * @param values  the Bind message's parameter values (null: SQL NULL)
     * @param formats the Bind message's parameter format codes (none: all text; one: for all)
     */
    public static String inline(String sql, List<byte[]> values, short[] formats) {
        if (formats.length > 1 && formats.length != values.size()) return null;
        String[] lits = new String[values.size()];
        for (int i = 0; i < lits.length; i++) {
            short f = formats.length == 0 ? 0 : formats.length == 1 ? formats[0] : formats[i];
            byte[] v = values.get(i);
            if (f != 0 || v == null) return null;
            String s = new String(v, StandardCharsets.UTF_8);
            if (s.indexOf('\\') >= 0 || s.indexOf('\0') >= 0 || s.length() > 1000) return null;
            lits[i] = "'" + s.replace("'", "''") + "'";
        }
        StringBuilder out = new StringBuilder(sql.length() + 16);
        int n = sql.length();
        for (int i = 0; i < n; ) {
            char c = sql.charAt(i);
            if (c == '\'') {
                boolean escapes = i > 0 && (sql.charAt(i - 1) == 'E' || sql.charAt(i - 1) == 'e');
                int j = i + 1;
                while (true) {
                    if (j >= n) return null;
                    char d = sql.charAt(j);
                    if (escapes && d == '\\') { j += 2; continue; }
                    if (d == '\'') {
                        if (j + 1 < n && sql.charAt(j + 1) == '\'') { j += 2; continue; }
                        break;
                    }
                    j++;
                }
                out.append(sql, i, j + 1);
                i = j + 1;
            } else if (c == '"') {
                int j = i + 1;
                while (true) {
                    if (j >= n) return null;
                    if (sql.charAt(j) == '"') {
                        if (j + 1 < n && sql.charAt(j + 1) == '"') { j += 2; continue; }
                        break;
                    }
                    j++;
                }
                out.append(sql, i, j + 1);
                i = j + 1;
            } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
                int j = sql.indexOf('\n', i);
                j = j < 0 ? n : j;
                out.append(sql, i, j);
                i = j;
            } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                int depth = 0, j = i;
                do {
                    if (j + 1 >= n) return null;   // unterminated
                    if (sql.charAt(j) == '/' && sql.charAt(j + 1) == '*') { depth++; j += 2; }
                    else if (sql.charAt(j) == '*' && sql.charAt(j + 1) == '/') { depth--; j += 2; }
                    else j++;
                } while (depth > 0);
                out.append(sql, i, j);
                i = j;
            } else if (c == '$') {
                int j = i + 1;
                while (j < n && Character.isDigit(sql.charAt(j))) j++;
                boolean afterIdent = i > 0 && (Character.isLetterOrDigit(sql.charAt(i - 1)) || sql.charAt(i - 1) == '_' || sql.charAt(i - 1) == '$');
                if (j > i + 1 && !afterIdent) {                               // $n
                    if (j - i > 6) return null;
                    int p = Integer.parseInt(sql.substring(i + 1, j));
                    if (p < 1 || p > lits.length) return null;
                    out.append(lits[p - 1]);
                    i = j;
                    continue;
                }
                if (afterIdent) { out.append(c); i++; continue; }            // a$b is an identifier
                // $tag$ ... $tag$
                int k = i + 1;
                while (k < n && (Character.isLetterOrDigit(sql.charAt(k)) || sql.charAt(k) == '_')) k++;
                if (k >= n || sql.charAt(k) != '$') return null;               // not something this reads with certainty
                String tag = sql.substring(i, k + 1);
                int end = sql.indexOf(tag, k + 1);
                if (end < 0) return null;
                out.append(sql, i, end + tag.length());
                i = end + tag.length();
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }
}
