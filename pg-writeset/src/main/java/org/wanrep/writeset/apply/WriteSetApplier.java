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
 *       type reads back exactly what the origin wrote.</li>
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

    public WriteSetApplier(Connection connection, String originName) throws SQLException {
        this.c = connection;
        c.setAutoCommit(true);
        try (Statement st = c.createStatement()) {
            st.execute("SET session_replication_role = replica");
        }
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
        try {
            try (Statement st = c.createStatement()) {
                st.execute("SET CONSTRAINTS ALL DEFERRED");
            }
            for (Group g : plan(ws.rows())) run(g);
            c.commit();
        } catch (SQLException | RuntimeException e) {
            try { c.rollback(); } catch (SQLException r) { e.addSuppressed(r); }
            throw e;
        }
        return Duration.ofNanos(System.nanoTime() - t0);
    }

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

    /** The statement for a row; it depends only on the row's shape, never on its values (NULL keys aside). */
    static String sql(RowChange r) {
        String table = quote(r.schema()) + "." + quote(r.table());
        StringBuilder s = new StringBuilder(128);
        switch (r.action()) {
            case INSERT -> {
                s.append("INSERT INTO ").append(table).append(" (");
                for (int i = 0; i < r.values().size(); i++) s.append(i == 0 ? "" : ", ").append(quote(r.values().get(i).name()));
                s.append(") VALUES (");
                for (int i = 0; i < r.values().size(); i++) s.append(i == 0 ? "" : ", ").append("?::").append(r.values().get(i).type());
                s.append(')');
            }
            case UPDATE -> {
                s.append("UPDATE ").append(table).append(" SET ");
                if (r.values().isEmpty()) {
                    String k = quote(r.key().get(0).name());
                    s.append(k).append(" = ").append(k);   // nothing but TOAST-unchanged columns: still check the row is there
                }
                for (int i = 0; i < r.values().size(); i++) {
                    ColumnValue v = r.values().get(i);
                    s.append(i == 0 ? "" : ", ").append(quote(v.name())).append(" = ?::").append(v.type());
                }
                where(s, r.key());
            }
            case DELETE -> {
                s.append("DELETE FROM ").append(table);
                where(s, r.key());
            }
        }
        return s.toString();
    }

    private static void where(StringBuilder s, List<ColumnValue> key) {
        if (key.isEmpty()) throw new IllegalArgumentException("UPDATE/DELETE without key");
        s.append(" WHERE ");
        for (int i = 0; i < key.size(); i++) {
            ColumnValue k = key.get(i);
            s.append(i == 0 ? "" : " AND ").append(quote(k.name()));
            // only REPLICA IDENTITY FULL keys can be NULL; "= NULL" would never match
            if (k.isNull()) s.append(" IS NULL");
            else s.append(" = ?::").append(k.type());
        }
    }

    private void run(Group g) throws SQLException {
        PreparedStatement ps = statements.get(g.sql());
        if (ps == null) {
            ps = c.prepareStatement(g.sql());
            statements.put(g.sql(), ps);
        }
        for (RowChange r : g.rows()) {
            int i = 1;
            for (ColumnValue v : r.values()) bind(ps, i++, v.value());
            if (r.action() != Action.INSERT)
                for (ColumnValue k : r.key()) if (!k.isNull()) bind(ps, i++, k.value());
            ps.addBatch();
        }
        int[] counts;
        try {
            counts = ps.executeBatch();
        } catch (java.sql.BatchUpdateException e) {
            // pgjdbc wraps the server's error: surface it with its SQLSTATE
            SQLException cause = e.getNextException() != null ? e.getNextException() : e;
            throw new SQLException("applying write set: " + cause.getMessage(), cause.getSQLState(), e);
        }
        for (int k = 0; k < counts.length; k++) {
            boolean ok = counts[k] == 1 || (counts[k] == Statement.SUCCESS_NO_INFO && g.action() == Action.INSERT);
            if (!ok) throw new WriteSetDivergenceException("write set diverges from this replica: " + g.action() + " on "
                    + g.rows().get(k).qualifiedTable() + " touched " + counts[k] + " rows instead of 1 (key "
                    + describe(g.rows().get(k).key()) + ")");
        }
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
        c.rollback();
        c.setAutoCommit(true);
        try (Statement st = c.createStatement()) {
            st.execute("SELECT pg_replication_origin_session_reset()");
            st.execute("SET session_replication_role = DEFAULT");
        }
    }
}
