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
