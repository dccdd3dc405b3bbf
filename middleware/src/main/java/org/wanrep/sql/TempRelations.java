package org.wanrep.sql;

import org.wanrep.lock.TableSet;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Temporary relations live in one session at one site: under symmetric execution no other site can run a statement
 * that reads or writes one. A session remembers the names it created ({@link #created}); an update that names one
 * ({@link #mentioned}) runs at its site only when it writes nothing else ({@link #onlyTemporary}), else it is
 * refused, and a block that names one cannot ship its log. Names are compared bare and folded (a temporary
 * relation shadows a permanent one of the same name on the default search_path, so a mention is taken as the
 * temporary one: refusing is the safe side).
 */
public final class TempRelations {
    private TempRelations() {}

    /** The relations {@code stmt} creates as temporary: CREATE TEMP|TEMPORARY TABLE|VIEW|SEQUENCE, SELECT ... INTO TEMP, pg_temp.x. */
    public static Set<String> created(String stmt) {
        // most statements create nothing temporary: no lexing without the word (the proxy asks for every request)
        if (!SqlText.containsIgnoreCase(stmt, "temp")) return Set.of();
        Set<String> out = new HashSet<>();
        List<SqlLexer.Token> ts = SqlLexer.tokens(stmt).stream().filter(SqlLexer.Token::significant).toList();
        for (int i = 0; i < ts.size(); i++) {
            if (!isWord(stmt, ts.get(i), "temp") && !isWord(stmt, ts.get(i), "temporary")) {
                // CREATE TABLE pg_temp.x
                if (isWord(stmt, ts.get(i), "pg_temp") && i + 2 < ts.size() && ts.get(i + 1).is(stmt, ".") && name(stmt, ts.get(i + 2)) != null)
                    out.add(name(stmt, ts.get(i + 2)));
                continue;
            }
            // only after CREATE [GLOBAL|LOCAL] or INTO: elsewhere "temp" is a column or other name
            int k = i - 1;
            if (k >= 0 && (isWord(stmt, ts.get(k), "global") || isWord(stmt, ts.get(k), "local"))) k--;
            if (k < 0 || !(isWord(stmt, ts.get(k), "create") || isWord(stmt, ts.get(k), "into"))) continue;
            int j = i + 1;
            // CREATE TEMP TABLE [IF NOT EXISTS] x / CREATE TEMP VIEW x / SELECT ... INTO TEMP [TABLE] x
            while (j < ts.size() && (isWord(stmt, ts.get(j), "table") || isWord(stmt, ts.get(j), "view") || isWord(stmt, ts.get(j), "sequence")
                    || isWord(stmt, ts.get(j), "recursive") || isWord(stmt, ts.get(j), "unlogged") || isWord(stmt, ts.get(j), "if")
                    || isWord(stmt, ts.get(j), "not") || isWord(stmt, ts.get(j), "exists"))) j++;
            if (j < ts.size() && name(stmt, ts.get(j)) != null) out.add(name(stmt, ts.get(j)));
        }
        return out;
    }

    /** The first of {@code names} that {@code texts} name as an identifier, or null. */
    public static String mentioned(List<String> texts, Set<String> names) {
        if (names.isEmpty()) return null;
        for (String t : texts)
            for (SqlLexer.Token tok : SqlLexer.tokens(t)) {
                String n = name(t, tok);
                if (n != null && names.contains(n)) return n;
            }
        return null;
    }

    /** Whether everything {@code tables} writes is one of the temporary {@code names}. */
    public static boolean onlyTemporary(TableSet tables, Set<String> names) {
        if (tables.all() || tables.writes().isEmpty()) return false;
        for (String w : tables.writes()) if (!names.contains(w.substring(w.lastIndexOf('.') + 1))) return false;
        return true;
    }

    private static boolean isWord(String sql, SqlLexer.Token t, String w) {
        return t.word() && t.identifier(sql).equals(w);
    }

    private static String name(String sql, SqlLexer.Token t) {
        return t.kind() == SqlLexer.Kind.IDENT || t.kind() == SqlLexer.Kind.QUOTED_IDENT ? t.identifier(sql) : null;
    }
}
