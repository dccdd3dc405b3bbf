package org.wanrep.pg;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * A digest of every user table of one replica: row count and an md5 over all rows in primary-key
 * order (all columns' text form; tables without a key are ordered by every column); also of every
 * user sequence and function (see {@link #sequencesAndFunctions}). Comparing the
 * digests of all replicas is {@code wanrep cluster check}.
 */
public final class TableDigest {
    private TableDigest() {}

    public record Digest(long rows, String md5) {}

    /** Digest per schema-qualified table name, {@code sequence schema.name} and {@code function schema.name(args)}. */
    public static Map<String, Digest> of(Connection c) throws SQLException {
        Map<String, Digest> out = new LinkedHashMap<>();
        for (String[] t : userTables(c)) {
            String q = quote(t[0]) + "." + quote(t[1]);
            String order = orderBy(c, t[0], t[1]);
            String sql = "SELECT count(*), coalesce(md5(string_agg(md5(wanrep_row__::text), '' ORDER BY " + order + ")), '') FROM " + q + " wanrep_row__";
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
                rs.next();
                out.put(t[0] + "." + t[1], new Digest(rs.getLong(1), rs.getString(2)));
            }
        }
        sequencesAndFunctions(c, out);
        return out;
    }

    /**
     * Every user sequence ({@code sequence schema.name}: rows = last_value, md5 over last_value and
     * is_called) and every user function or procedure ({@code function schema.name(args)}: md5 of
     * pg_get_functiondef): replicas must agree on these too (a sequence behind at one site hands out
     * a value already used elsewhere). Extension members are left out (their versions are the
     * installation's business).
     */
    private static void sequencesAndFunctions(Connection c, Map<String, Digest> out) throws SQLException {
        List<String[]> seqs = new ArrayList<>();
        String sql = "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                + "WHERE c.relkind = 'S' AND n.nspname NOT IN ('pg_catalog','information_schema','wanrep') "
                + "AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%' ORDER BY 1, 2";
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) seqs.add(new String[]{rs.getString(1), rs.getString(2)});
        }
        for (String[] s : seqs) {
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
                    "SELECT last_value, md5(last_value::text || ',' || is_called::text) FROM " + quote(s[0]) + "." + quote(s[1]))) {
                rs.next();
                out.put("sequence " + s[0] + "." + s[1], new Digest(rs.getLong(1), rs.getString(2)));
            }
        }
        String fsql = "SELECT n.nspname || '.' || p.proname || '(' || pg_catalog.pg_get_function_identity_arguments(p.oid) || ')', "
                + "md5(pg_catalog.pg_get_functiondef(p.oid)) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                + "WHERE p.prokind IN ('f','p') AND n.nspname NOT IN ('pg_catalog','information_schema','wanrep') AND n.nspname NOT LIKE 'pg_temp%' "
                + "AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e') "
                + "ORDER BY 1";
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(fsql)) {
            while (rs.next()) out.put("function " + rs.getString(1), new Digest(0, rs.getString(2)));
        }
    }

    /** The user's tables (schema wanrep holds the middleware's own bookkeeping of each replica, which differs by design). */
    private static List<String[]> userTables(Connection c) throws SQLException {
        List<String[]> out = new ArrayList<>();
        String sql = "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                + "WHERE c.relkind IN ('r','p') AND n.nspname NOT IN ('pg_catalog','information_schema','wanrep') "
                + "AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%' ORDER BY 1, 2";
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) out.add(new String[]{rs.getString(1), rs.getString(2)});
        }
        return out;
    }

    /** Primary-key columns of the row alias (unlikely to clash with a column name), else the whole row. */
    private static String orderBy(Connection c, String schema, String table) throws SQLException {
        String sql = "SELECT a.attname FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                + "JOIN LATERAL unnest(i.indkey) WITH ORDINALITY k(attnum, ord) ON true "
                + "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum "
                + "WHERE i.indisprimary AND n.nspname = ? AND c.relname = ? ORDER BY k.ord";
        List<String> cols = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, schema);
            ps.setString(2, table);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) cols.add("wanrep_row__." + quote(rs.getString(1)));
            }
        }
        return cols.isEmpty() ? "wanrep_row__::text" : String.join(", ", cols);
    }

    static String quote(String ident) { return "\"" + ident.replace("\"", "\"\"") + "\""; }

    /** Verdict per table across replicas: "same" or a description of the difference. */
    public static Map<String, String> compare(List<String> names, List<Map<String, Digest>> digests) {
        TreeSet<String> tables = new TreeSet<>();
        for (Map<String, Digest> d : digests) tables.addAll(d.keySet());
        Map<String, String> verdict = new LinkedHashMap<>();
        for (String t : tables) {
            Digest ref = digests.get(0).get(t);
            StringBuilder diff = new StringBuilder();
            for (int i = 0; i < digests.size(); i++) {
                Digest d = digests.get(i).get(t);
                if (d == null) diff.append(names.get(i)).append(": missing; ");
                else if (ref == null || !d.equals(ref)) diff.append(names.get(i)).append(": ").append(d.rows()).append(" rows, md5 ").append(d.md5(), 0, Math.min(8, d.md5().length())).append("; ");
            }
            verdict.put(t, diff.isEmpty() ? "same" : "DIFFERENT (" + names.get(0) + ": "
                    + (ref == null ? "missing" : ref.rows() + " rows, md5 " + ref.md5().substring(0, Math.min(8, ref.md5().length()))) + "; " + diff.toString().trim() + ")");
        }
        return verdict;
    }
}
