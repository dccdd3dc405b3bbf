package org.wanrep.sql;

import net.sf.jsqlparser.expression.Expression;
import net.sf.jsqlparser.expression.LongValue;
import net.sf.jsqlparser.expression.StringValue;
import net.sf.jsqlparser.expression.operators.conditional.AndExpression;
import net.sf.jsqlparser.expression.operators.relational.EqualsTo;
import net.sf.jsqlparser.expression.operators.relational.ExpressionList;
import net.sf.jsqlparser.expression.operators.relational.InExpression;
import net.sf.jsqlparser.expression.operators.relational.ParenthesedExpressionList;
import net.sf.jsqlparser.schema.Column;
import net.sf.jsqlparser.statement.Statement;
import net.sf.jsqlparser.statement.delete.Delete;
import net.sf.jsqlparser.statement.insert.Insert;
import net.sf.jsqlparser.statement.select.PlainSelect;
import net.sf.jsqlparser.statement.select.Select;
import net.sf.jsqlparser.statement.select.Values;
import net.sf.jsqlparser.statement.update.Update;
import net.sf.jsqlparser.statement.update.UpdateSet;
import org.wanrep.lock.LockMode;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Which rows of its one table a statement touches, when the text shows them: equality (or IN) on
 * every primary-key column with plain literals, or INSERT ... VALUES naming the key columns.
 * Deterministic: the answer depends only on the text and the schema, so every site derives the
 * same row locks. When in doubt the answer is "not shown" (null) and the caller locks the table:
 * other unique keys (a row reached by another key, or a unique check across rows), keys a
 * statement assigns, parameters ({@code $1}: their values are not in the text), casts and any
 * literal whose value as the key's type is not plain (only integer keys from integer or
 * digit-string literals, and text/varchar keys from standard string literals).
 */
final class RowKeys {
    private static final int MAX_KEYS = 256;
    /**
     * {@code -Dwanrep.rowlocks=false}: table locks only, as before row locks (for measuring their
     * effect). It acts where requests are classified, at their origin; the lock set travels with
     * the request, so every site still enqueues the same one.
     */
    static final boolean ENABLED = !"false".equals(System.getProperty("wanrep.rowlocks"));
    private static final Set<String> INTEGER = Set.of("int2", "int4", "int8");
    private static final Set<String> TEXT = Set.of("text", "varchar");

    private RowKeys() {}

    /**
     * The rows of {@code table} that {@code parsed} touches, key -> mode, an empty map for an insert
     * into a table without any unique key (its new rows no other statement can name), or null.
     */
    static Map<String, LockMode> of(Statement parsed, String table, Catalog cat) { return of(parsed, table, cat, null); }

    /**
     * As {@link #of(Statement, String, Catalog)} on a statement parsed from its shape
     * ({@link SqlText#normalize(String, List)} with each {@code ?} a JDBC parameter): parameter
     * {@code i} stands for {@code literals.get(i - 1)}, the text's literal as written (null: not plain),
     * so a shape parsed once gives the keys of every text of that shape.
     */
    static Map<String, LockMode> of(Statement parsed, String table, Catalog cat, List<String> literals) {
        if (!ENABLED) return null;
        if (!cat.keysKnown || !cat.relationsByName.containsKey(table.substring(table.indexOf('.') + 1))
                || cat.wholeOnly.contains(table) || cat.triggered.contains(table)) return null;
        // a foreign key within the table: its checks and cascades reach other rows of it
        for (Catalog.ForeignKey fk : cat.foreignKeys) if (fk.child().equals(table) && fk.parent().equals(table)) return null;
        List<String> pk = cat.primaryKeys.get(table);
        Set<String> unique = cat.otherUnique.getOrDefault(table, Set.of());
        try {
            switch (parsed) {
                case Update u -> {
                    if (pk == null || u.getFromItem() != null || (u.getJoins() != null && !u.getJoins().isEmpty())
                            || (u.getStartJoins() != null && !u.getStartJoins().isEmpty()) || u.getWithItemsList() != null) return null;
                    for (UpdateSet set : u.getUpdateSets())
                        for (Column c : set.getColumns()) {
                            String col = ident(c.getColumnName());
                            if (unique.contains(col) || unique.contains("*") || keyColumn(pk, col) >= 0) return null;
                        }
                    return where(u.getWhere(), pk, LockMode.WRITE, literals);
                }
                case Delete d -> {
                    if (pk == null || (d.getUsingList() != null && !d.getUsingList().isEmpty()) || (d.getJoins() != null && !d.getJoins().isEmpty())
                            || (d.getTables() != null && !d.getTables().isEmpty()) || d.getWithItemsList() != null) return null;
                    return where(d.getWhere(), pk, LockMode.WRITE, literals);
                }
                case Insert i -> {
                    if (i.getConflictAction() != null || i.isUseDuplicate() || i.getWithItemsList() != null || !unique.isEmpty()) return null;
                    if (!(i.getSelect() instanceof Values v)) return null;
                    if (pk == null) return Map.of();   // nothing unique: fresh rows conflict only with whole-table access
                    if (i.getColumns() == null) return null;
                    List<String> cols = new ArrayList<>();
                    for (Column c : i.getColumns()) cols.add(ident(c.getColumnName()));
                    int[] at = new int[pk.size()];
                    for (int k = 0; k < pk.size(); k++) if ((at[k] = cols.indexOf(keyName(pk.get(k)))) < 0) return null;
                    List<List<Expression>> rowsOut = new ArrayList<>();
                    // one row parses as (a, b), several as a list of (a, b)
                    ExpressionList<?> exprs = v.getExpressions();
                    if (exprs instanceof ParenthesedExpressionList<?>) rowsOut.add(new ArrayList<>(exprs));
                    else for (Expression e : exprs) {
                        if (!(e instanceof ParenthesedExpressionList<?> row)) return null;
                        rowsOut.add(new ArrayList<>(row));
                    }
                    Map<String, LockMode> out = new HashMap<>();
                    for (List<Expression> row : rowsOut) {
                        if (row.size() != cols.size()) return null;
                        StringBuilder key = new StringBuilder();
                        for (int k = 0; k < pk.size(); k++) {
                            String val = literal(row.get(at[k]), keyType(pk.get(k)), literals);
                            if (val == null) return null;
                            if (k > 0) key.append('\0');
                            key.append(val);
                        }
                        out.put(key.toString(), LockMode.WRITE);
                    }
                    return out.size() > MAX_KEYS ? null : out;
                }
                case PlainSelect s -> {
                    if (pk == null || s.getJoins() != null && !s.getJoins().isEmpty() || s.getWithItemsList() != null
                            || !(s.getFromItem() instanceof net.sf.jsqlparser.schema.Table)) return null;
                    return where(s.getWhere(), pk, s.getForMode() != null ? LockMode.WRITE : LockMode.READ, literals);
                }
                default -> { return null; }
            }
        } catch (RuntimeException e) {
            return null;   // a shape this does not know: lock the table
        }
    }

    /** Key values per key column from a conjunction of {@code col = lit} / {@code col IN (lits)}; every key column needed. */
    private static Map<String, LockMode> where(Expression where, List<String> pk, LockMode mode, List<String> literals) {
        if (where == null) return null;
        List<Set<String>> values = new ArrayList<>();
        for (int k = 0; k < pk.size(); k++) values.add(null);
        List<Expression> terms = new ArrayList<>();
        conjuncts(where, terms);
        for (Expression t : terms) {
            Column c;
            List<Expression> lits;
            if (t instanceof EqualsTo eq) {
                if (eq.getLeftExpression() instanceof Column l) { c = l; lits = List.of(eq.getRightExpression()); }
                else if (eq.getRightExpression() instanceof Column r) { c = r; lits = List.of(eq.getLeftExpression()); }
                else continue;
            } else if (t instanceof InExpression in && !in.isNot() && in.getLeftExpression() instanceof Column l
                    && in.getRightExpression() instanceof ExpressionList<?> list && !(in.getRightExpression() instanceof Select)) {
                c = l;
                lits = new ArrayList<>(list);
            } else continue;   // another condition on the same rows only narrows them
            int k = keyColumn(pk, ident(c.getColumnName()));
            if (k < 0) continue;
            Set<String> vs = new HashSet<>();
            for (Expression e : lits) {
                String v = literal(e, keyType(pk.get(k)), literals);
                if (v == null) return null;   // a key compared with something not plain: cannot tell the row
                vs.add(v);
            }
            if (values.get(k) != null) vs.retainAll(values.get(k));   // id = 1 AND id IN (1, 2)
            values.set(k, vs);
        }
        List<String> keys = List.of("");
        for (int k = 0; k < pk.size(); k++) {
            if (values.get(k) == null) return null;
            List<String> next = new ArrayList<>();
            for (String prefix : keys) for (String v : values.get(k)) next.add(k == 0 ? v : prefix + '\0' + v);
            if (next.size() > MAX_KEYS) return null;
            keys = next;
        }
        Map<String, LockMode> out = new HashMap<>();
        for (String key : keys) out.put(key, mode);
        return out;
    }

    private static void conjuncts(Expression e, List<Expression> out) {
        if (e instanceof AndExpression a) { conjuncts(a.getLeftExpression(), out); conjuncts(a.getRightExpression(), out); }
        else if (e instanceof net.sf.jsqlparser.expression.Parenthesis p) conjuncts(p.getExpression(), out);
        else if (e instanceof ParenthesedExpressionList<?> p && p.size() == 1) conjuncts(p.get(0), out);
        else out.add(e);
    }

    /** A literal, or a JDBC parameter standing for one of {@code literals} (see {@link #of(Statement, String, Catalog, List)}). */
    private static String literal(Expression e, String type, List<String> literals) {
        if (!(e instanceof net.sf.jsqlparser.expression.JdbcParameter p)) return literal(e, type);
        if (literals == null || p.isUseFixedIndex() || p.getIndex() == null || p.getIndex() < 1 || p.getIndex() > literals.size()) return null;
        String t = literals.get(p.getIndex() - 1);
        if (t == null) return null;
        if (t.startsWith("'")) {   // a standard string literal as written: its value keeps doubled quotes, as StringValue's does
            if (t.length() < 2 || !t.endsWith("'")) return null;
            return literal(new StringValue().withValue(t.substring(1, t.length() - 1)), type);
        }
        if (!digits(t, false)) return null;
        return literal(new LongValue().withStringValue(t), type);
    }

    /** The literal's value as the key type sees it, canonical, or null when not plain. */
    static String literal(Expression e, String type) {
        if (INTEGER.contains(type)) {
            String digits;
            if (e instanceof LongValue l) digits = l.getStringValue();
            else if (e instanceof StringValue s && s.getPrefix() == null) digits = s.getValue();
            else return null;
            if (!digits(digits, true)) return null;
            // canonical: no leading zeros, no "-0"
            return digits.length() <= 18 ? Long.toString(Long.parseLong(digits)) : new BigInteger(digits).toString();
        }
        if (TEXT.contains(type) && e instanceof StringValue s && s.getPrefix() == null && !s.getValue().contains("\\")
                && s.getValue().length() <= 1000) {   // a lock name, and one the request codec can carry
            return s.getValue().replace("''", "'");
        }
        return null;
    }

    /** Whether {@code s} is 1 to 30 ASCII digits, after a minus sign if {@code signed} allows one. */
    static boolean digits(String s, boolean signed) {
        int from = signed && s.startsWith("-") ? 1 : 0, n = s.length() - from;
        if (n < 1 || n > 30) return false;
        for (int i = from; i < s.length(); i++) if (s.charAt(i) < '0' || s.charAt(i) > '9') return false;
        return true;
    }

    private static int keyColumn(List<String> pk, String col) {
        for (int k = 0; k < pk.size(); k++) if (keyName(pk.get(k)).equals(col)) return k;
        return -1;
    }

    private static String keyName(String nameType) { return nameType.substring(0, nameType.lastIndexOf(':')); }
    private static String keyType(String nameType) { return nameType.substring(nameType.lastIndexOf(':') + 1); }

    /** A column name as written: quoted keeps its case, unquoted folds to lower case. */
    private static String ident(String written) {
        if (written.length() >= 2 && written.startsWith("\"") && written.endsWith("\"")) return written.substring(1, written.length() - 1).replace("\"\"", "\"");
        return written.toLowerCase(Locale.ROOT);
    }
}
