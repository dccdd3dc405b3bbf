package org.wanrep.sql;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * For row locks from the extended protocol: the statement text with each {@code $n} replaced by
 * the value bound to it, as a standard string literal, so that {@link RowKeys} sees the key values
 * a simple query would show. Only for deriving locks (execution still uses Parse/Bind), and only
 * when certain: every bound value in text format, none NULL, none with a backslash or a quote
 * problem, every {@code $n} bound, and a text this scanner reads to its end (quotes, quoted
 * identifiers, dollar quotes, line and nested block comments, as {@link SqlLexer} reads them); otherwise null, and the caller
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
        List<SqlLexer.Token> tokens = SqlLexer.tokens(sql);
        if (SqlLexer.unterminated(tokens)) return null;
        for (SqlLexer.Token t : tokens) {
            if (t.kind() == SqlLexer.Kind.PARAM) {
                if (t.end() - t.start() > 6) return null;
                int p = Integer.parseInt(sql.substring(t.start() + 1, t.end()));
                if (p < 1 || p > lits.length) return null;
                out.append(lits[p - 1]);
            } else if (t.kind() == SqlLexer.Kind.OTHER && sql.charAt(t.start()) == '$') {
                return null;   // a lone $: not something this reads with certainty
            } else out.append(sql, t.start(), t.end());
        }
        return out.toString();
    }
}
