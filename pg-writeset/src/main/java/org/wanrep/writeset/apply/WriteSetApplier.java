package org.wanrep.writeset.apply;

import org.wanrep.writeset.ColumnValue;
import org.wanrep.writeset.RowChange;
import org.wanrep.writeset.RowChange.Action;
import org.wanrep.writeset.WriteSet;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Applies write sets to the local replica over one JDBC connection it owns for its lifetime.
 * <ul>
 *   <li>One local transaction per write set; any error rolls it back and is thrown.</li>
 *   <li>{@code session_replication_role = replica}: the write set already holds the rows that the
 *       origin's triggers and cascades produced; firing them again would apply them twice.</li>
 *   <li>A replication origin for the session: the local capture sees the origin and skips these
 *       changes, so an applied write set is not captured and shipped again.</li>
 *   <li>Rows are grouped into batched prepared statements by (table, action, column set). Rows of one
 *       table keep their order (unique constraints see the same sequence as at the origin); rows of
 *       different tables may be reordered, which is safe because foreign keys are triggers and
 *       triggers do not fire under the replica role. Deferrable constraints are deferred to commit.</li>
 *   <li>Values are bound as text and cast to the column type ({@code ?::numeric(40,10)}), so every
 *       type reads back exactly what the origin wrote. Rows whose shape occurs fewer than 4 times go
 *       instead as literal statements ({@code 'text'::type}) in one Statement batch with the others,
 *       so a write set of many small different statements costs one round trip, not one each.</li>
 *   <li>UPDATE sets only the columns present (absent = TOAST-unchanged, left alone). UPDATE and DELETE
 *       find the row by its old key, and each must touch exactly one row, or the replica has diverged.</li>
 * </ul>
 * Not thread-safe: one applier per thread. A replication origin can be active in one session at a
 * time, so concurrent appliers on one replica need distinct origin names.
 */
public final class WriteSetApplier implements AutoCloseable {
    private static final int STATEMENT_CACHE = 256;

    private final Connection c;
    private final Map<String, PreparedStatement> statements = new LinkedHashMap<>(64, 0.75f, true) {
        @Override protected boolean removeEldestEntry(Map.Entry<String, PreparedStatement> e) {
            if (size() <= STATEMENT_CACHE) return false;
            try { e.getValue().close(); } catch (SQLException ignored) { }
            return true;
        }
    };

    private final Statement literalBatch;

    /**
     * Generated (STORED) columns per table ("schema.table"), which wal2json reports with the row but PostgreSQL
     * refuses values for (428C9): the target computes them itself. Read on first sight of a table, and again when
     * an apply is refused for that reason (a column made generated since).
     */
    private final Map<String, java.util.Set<String>> generated = new HashMap<>();

    public WriteSetApplier(Connection connection, String originName) throws SQLException {
        this.c = connection;
        c.setAutoCommit(true);
        try (Statement st = c.createStatement()) {
            st.execute("SET session_replication_role = replica");
            try (ResultSet rs = st.executeQuery("SHOW standard_conforming_strings")) {
                rs.next();
                if (!"on".equals(rs.getString(1))) throw new SQLException("the applier needs standard_conforming_strings = on", "55000");
            }
        }
        literalBatch = c.createStatement();
        ensureOrigin(c, originName);
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_replication_origin_session_setup(?)")) {
            ps.setString(1, originName);
            ps.execute();
        }
        c.setAutoCommit(false);
    }

    /** Creates the replication origin unless it exists. */
    public static void ensureOrigin(Connection c, String originName) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_replication_origin_oid(?)")) {
            ps.setString(1, originName);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (rs.getObject(1) != null) return;
            }
        }
        boolean auto = c.getAutoCommit();
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_replication_origin_create(?)")) {
            ps.setString(1, originName);
            ps.execute();
            if (!auto) c.commit();
        } catch (SQLException e) {
            if (!auto) c.rollback();
            if (!"42710".equals(e.getSQLState())) throw e;   // created meanwhile by another applier
        }
    }

    /** Applies one write set in one local transaction; returns the time it took, commit included. */
    public Duration apply(WriteSet ws) throws SQLException {
        long t0 = System.nanoTime();
        apply(ws, new InTransaction() { });
        return Duration.ofNanos(System.nanoTime() - t0);
    }

    /** The caller's work in a write set's local transaction, so that it commits (or not) with the rows. */
    public interface InTransaction {
        /** Before the rows. False: skip this write set (it was applied already, say); nothing commits. */
        default boolean before(Connection c) throws SQLException { return true; }
        /** After the rows, before COMMIT. */
        default void after(Connection c) throws SQLException { }
    }

    /**
     * Applies one write set together with {@code around}'s work in one local transaction; any error
     * rolls all of it back and is thrown. Returns false if {@code around} chose to skip it.
     */
    public boolean apply(WriteSet ws, InTransaction around) throws SQLException {
        try {
            return applyOnce(ws, around);
        } catch (SQLException e) {
            if (!"428C9".equals(e.getSQLState()) || generated.isEmpty()) throw e;
            generated.clear();   // a column became generated since we looked: look again, once
            return applyOnce(ws, around);
        }
    }

    private boolean applyOnce(WriteSet ws, InTransaction around) throws SQLException {
        try {
            if (!around.before(c)) {
                c.rollback();
                return false;
            }
            // Single-row groups go as literal statements in one Statement batch (one round trip for all of
            // them); groups of several rows as prepared batches (one Parse, then Bind/Execute per row).
            List<String> literal = new ArrayList<>();
            List<RowChange> literalRows = new ArrayList<>();
            literal.add("SET CONSTRAINTS ALL DEFERRED");   // deferrable checks see the result, as at the origin
            literalRows.add(null);
            for (Group g : plan(withoutGenerated(ws.rows()))) {
                if (g.rows().size() >= PREPARED_FROM) {
                    runLiteral(literal, literalRows);
                    runPrepared(g);
                } else {
                    for (RowChange r : g.rows()) {
                        literal.add(literalSql(r));
                        literalRows.add(r);
                    }
                }
            }
            runLiteral(literal, literalRows);
            around.after(c);
            c.commit();
        } catch (SQLException | RuntimeException e) {
            try { c.rollback(); } catch (SQLException r) { e.addSuppressed(r); }
            throw e;
        }
        return true;
    }

    /** The rows without the values of generated columns (looked up in this transaction for tables not seen yet). */
    private List<RowChange> withoutGenerated(List<RowChange> rows) throws SQLException {
        java.util.Set<String> unknown = new java.util.TreeSet<>();
        for (RowChange r : rows) if (!generated.containsKey(r.qualifiedTable())) unknown.add(r.qualifiedTable());
        if (!unknown.isEmpty()) {
            for (String t : unknown) generated.put(t, new java.util.HashSet<>());
            try (PreparedStatement ps = c.prepareStatement("SELECT n.nspname || '.' || c.relname, a.attname FROM pg_catalog.pg_attribute a "
                    + "JOIN pg_catalog.pg_class c ON c.oid = a.attrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
                    + "WHERE a.attgenerated <> '' AND NOT a.attisdropped AND a.attnum > 0 AND n.nspname || '.' || c.relname = ANY (?)")) {
                ps.setArray(1, c.createArrayOf("text", unknown.toArray()));
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) generated.get(rs.getString(1)).add(rs.getString(2));
                }
            }
        }
        List<RowChange> out = new ArrayList<>(rows.size());
        for (RowChange r : rows) {
            java.util.Set<String> gen = generated.get(r.qualifiedTable());
            if (gen.isEmpty() || r.values().isEmpty()) {
                out.add(r);
                continue;
            }
            List<ColumnValue> vals = new ArrayList<>(r.values().size());
            for (ColumnValue v : r.values()) if (!gen.contains(v.name())) vals.add(v);
            out.add(new RowChange(r.schema(), r.table(), r.action(), r.key(), vals));
        }
        return out;
    }

    /** From this many rows of one shape on, a prepared batch beats literal statements (parsed and planned per row). */
    private static final int PREPARED_FROM = 4;

    /** Rows sharing one statement text, in the order they must run. */
    record Group(String sql, RowChange.Action action, List<RowChange> rows) {}

    /** Consecutive rows of one table with the same shape share a batch; a new shape starts a new batch. */
    static List<Group> plan(List<RowChange> rows) {
        List<Group> groups = new ArrayList<>();
        Map<String, Group> lastOfTable = new HashMap<>();
        for (RowChange r : rows) {
            String sql = sql(r);
            String table = r.schema() + "\u0000" + r.table();
            Group g = lastOfTable.get(table);
            if (g == null || !g.sql().equals(sql)) {
                g = new Group(sql, r.action(), new ArrayList<>());
                groups.add(g);
                lastOfTable.put(table, g);
            }
            g.rows().add(r);
        }
        return groups;
    }

    /** The statement for a row; it depends only on the row's shape, never on its values (NULL keys, and key columns an UPDATE leaves alone, aside). */
    static String sql(RowChange r) {
        return render(r, v -> "?");
    }

    /** {@code param} renders each value's placeholder: "?" for prepared statements, a literal otherwise. */
    private static String render(RowChange r, java.util.function.UnaryOperator<String> param) {
        String table = quote(r.schema()) + "." + quote(r.table());
        StringBuilder s = new StringBuilder(128);
        switch (r.action()) {
            case INSERT -> {
                s.append("INSERT INTO ").append(table).append(" (");
                for (int i = 0; i < r.values().size(); i++) s.append(i == 0 ? "" : ", ").append(quote(r.values().get(i).name()));
                // the executor's values, identity columns' too (GENERATED ALWAYS refuses them otherwise; no effect elsewhere)
                s.append(") OVERRIDING SYSTEM VALUE VALUES (");
                for (int i = 0; i < r.values().size(); i++) s.append(i == 0 ? "" : ", ").append(param.apply(r.values().get(i).value())).append("::").append(r.values().get(i).type());
                s.append(')');
            }
            case UPDATE -> {
                s.append("UPDATE ").append(table).append(" SET ");
                if (setColumns(r).isEmpty()) {
                    String k = quote(r.key().get(0).name());
                    s.append(k).append(" = ").append(k);   // nothing but TOAST-unchanged columns: still check the row is there
                }
                boolean first = true;
                for (ColumnValue v : setColumns(r)) {
                    s.append(first ? "" : ", ").append(quote(v.name())).append(" = ").append(param.apply(v.value())).append("::").append(v.type());
                    first = false;
                }
                where(s, r.key(), param);
            }
            case DELETE -> {
                s.append("DELETE FROM ").append(table);
                where(s, r.key(), param);
            }
        }
        return s.toString();
    }

    /**
     * The columns an UPDATE sets: its new values, less key columns it leaves as they were (the WHERE clause already
     * pins them). A GENERATED ALWAYS identity column, a primary key as a rule, can only be updated to DEFAULT, so
     * setting it even to its own value fails; one that did change (to DEFAULT at the executor) still fails here,
     * which stops the site rather than keep another value.
     */
    static List<ColumnValue> setColumns(RowChange r) {
        List<ColumnValue> out = new ArrayList<>(r.values().size());
        for (ColumnValue v : r.values()) {
            boolean unchangedKey = false;
            for (ColumnValue k : r.key())
                if (k.name().equals(v.name()) && !k.isNull() && !v.isNull() && k.value().equals(v.value())) unchangedKey = true;
            if (!unchangedKey) out.add(v);
        }
        return out;
    }

    private static void where(StringBuilder s, List<ColumnValue> key, java.util.function.UnaryOperator<String> param) {
        if (key.isEmpty()) throw new IllegalArgumentException("UPDATE/DELETE without key");
        s.append(" WHERE ");
        for (int i = 0; i < key.size(); i++) {
            ColumnValue k = key.get(i);
            s.append(i == 0 ? "" : " AND ").append(quote(k.name()));
            // only REPLICA IDENTITY FULL keys can be NULL; "= NULL" would never match
            if (k.isNull()) s.append(" IS NULL");
            else s.append(" = ").append(param.apply(k.value())).append("::").append(k.type());
        }
    }

    private void runPrepared(Group g) throws SQLException {
        PreparedStatement ps = statements.get(g.sql());
        if (ps == null) {
            ps = c.prepareStatement(g.sql());
            statements.put(g.sql(), ps);
        }
        for (RowChange r : g.rows()) {
            int i = 1;
            for (ColumnValue v : r.action() == Action.UPDATE ? setColumns(r) : r.values()) bind(ps, i++, v.value());
            if (r.action() != Action.INSERT)
                for (ColumnValue k : r.key()) if (!k.isNull()) bind(ps, i++, k.value());
            ps.addBatch();
        }
        verify(execute(ps), g.rows());
    }

    private void runLiteral(List<String> sql, List<RowChange> rows) throws SQLException {
        if (sql.isEmpty()) return;
        for (String q : sql) literalBatch.addBatch(q);
        int[] counts = execute(literalBatch);
        for (int k = 0; k < rows.size(); k++) if (rows.get(k) != null) verify(counts[k], rows.get(k));
        sql.clear();
        rows.clear();
    }

    private static int[] execute(Statement st) throws SQLException {
        try {
            return st.executeBatch();
        } catch (java.sql.BatchUpdateException e) {
            // pgjdbc wraps the server's error: surface it with its SQLSTATE
            SQLException cause = e.getNextException() != null ? e.getNextException() : e;
            throw new SQLException("applying write set: " + cause.getMessage(), cause.getSQLState(), e);
        } finally {
            st.clearBatch();
        }
    }

    private static void verify(int[] counts, List<RowChange> rows) throws SQLException {
        for (int k = 0; k < counts.length; k++) verify(counts[k], rows.get(k));
    }

    private static void verify(int count, RowChange r) throws SQLException {
        boolean ok = count == 1 || (count == Statement.SUCCESS_NO_INFO && r.action() == Action.INSERT);
        if (!ok) throw new WriteSetDivergenceException("write set diverges from this replica: " + r.action() + " on "
                + r.qualifiedTable() + " touched " + count + " rows instead of 1 (key " + describe(r.key()) + ")");
    }

    /** The row's statement with its values inlined as string literals (standard_conforming_strings is on). */
    static String literalSql(RowChange r) {
        return render(r, v -> v == null ? "NULL" : "'" + v.replace("'", "''") + "'");
    }

    private static void bind(PreparedStatement ps, int i, String value) throws SQLException {
        if (value == null) ps.setNull(i, Types.VARCHAR);
        else ps.setString(i, value);
    }

    private static String describe(List<ColumnValue> key) {
        StringBuilder s = new StringBuilder();
        for (ColumnValue k : key) {
            String v = k.value() == null ? "NULL" : k.value().length() > 40 ? k.value().substring(0, 40) + "..." : k.value();
            s.append(s.isEmpty() ? "" : ", ").append(k.name()).append('=').append(v);
        }
        return s.toString();
    }

    static String quote(String ident) { return "\"" + ident.replace("\"", "\"\"") + "\""; }

    /** Ends the origin session and the replica role; the connection stays open and belongs to the caller. */
    @Override public void close() throws SQLException {
        for (PreparedStatement ps : statements.values()) {
            try { ps.close(); } catch (SQLException ignored) { }
        }
        statements.clear();
        if (c.isClosed()) return;
        literalBatch.close();
        c.rollback();
        c.setAutoCommit(true);
        try (Statement st = c.createStatement()) {
            st.execute("SELECT pg_replication_origin_session_reset()");
            st.execute("SET session_replication_role = DEFAULT");
        }
    }
}
