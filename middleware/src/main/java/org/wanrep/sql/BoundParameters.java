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
    public static String inline(String sql, List<byte[]> values, short[] formats) { return inline(sql, values, formats, new int[0]); }

    private static final int INT8 = 20, INT2 = 21, INT4 = 23, TEXT = 25, VARCHAR = 1043;

    /**
     * As {@link #inline(String, List, short[])} with the parameter types the Parse message declared
     * ({@code types}, 0 or missing: left to the server, which takes the compared column's type). A
     * value in binary format is read only when its declared type says how: int2/int4/int8 (big-endian,
     * of that size) and text/varchar (UTF-8). A declared type other than those (bpchar's trailing
     * blanks, a float's fractions...) could compare equal to a key other than the text, so it is refused.
     */
    public static String inline(String sql, List<byte[]> values, short[] formats, int[] types) {
        if (formats.length > 1 && formats.length != values.size()) return null;
        String[] lits = new String[values.size()];
        for (int i = 0; i < lits.length; i++) {
            short f = formats.length == 0 ? 0 : formats.length == 1 ? formats[0] : formats[i];
            int type = i < types.length ? types[i] : 0;
            byte[] v = values.get(i);
            if (v == null || (type != 0 && type != INT2 && type != INT4 && type != INT8 && type != TEXT && type != VARCHAR)) return null;
            String s;
            if (f == 0 || (f == 1 && (type == TEXT || type == VARCHAR))) s = new String(v, StandardCharsets.UTF_8);
            else if (f == 1 && (type == INT2 && v.length == 2 || type == INT4 && v.length == 4 || type == INT8 && v.length == 8)) {
                long x = 0;
                for (byte b : v) x = (x << 8) | (b & 0xff);
                if (v.length == 2) x = (short) x;
                else if (v.length == 4) x = (int) x;
                s = Long.toString(x);
            } else return null;
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
