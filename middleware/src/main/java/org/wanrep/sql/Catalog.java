package org.wanrep.sql;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What the classifier needs to know about one database, read from pg_catalog: relations, the base
 * tables behind views, foreign keys that cascade, tables with user triggers, the sequences and
 * non-deterministic functions in column defaults, and the built-in function names. A plain
 * snapshot: tests build one by hand; {@link #load} reads it from PostgreSQL.
 */
public final class Catalog {
    /** A foreign key: {@code child} references {@code parent}; cascading if a change to parent writes child. */
    public record ForeignKey(String child, String parent, boolean cascades) {}

    final Map<String, List<String>> relationsByName = new HashMap<>();   // bare name -> schema.name
    final Map<String, Set<String>> viewBases = new HashMap<>();          // view -> relations it reads
    final List<ForeignKey> foreignKeys = new ArrayList<>();
    final Set<String> triggered = new HashSet<>();
    final Map<String, Set<String>> defaultSequences = new HashMap<>();   // table -> sequences its defaults (and identity columns) advance
    /** Every sequence (schema.name): a write set naming one may advance it, which is not transactional. */
    final Set<String> sequences = new HashSet<>();
    final Map<String, List<String>> defaultExprs = new HashMap<>();      // table -> its column default expressions
    final Set<String> builtinFunctions = new HashSet<>();
    /** User functions by schema.name (every overload): their bodies, from which {@link FunctionSets} derives table sets. */
    final Map<String, List<Function>> functionBodies = new HashMap<>();

    /** One user function: language name and source ({@code prosrc}); body null if there is none to read (C, aggregates, BEGIN ATOMIC). */
    public record Function(String name, String language, String body) {}
    /** table -> its primary key columns in key order, each "name:type" (type: pg_type.typname); row locks use only these. */
    final Map<String, List<String>> primaryKeys = new HashMap<>();
    /** table -> columns of its other unique indexes and exclusion constraints ("*": an expression or partial one). */
    final Map<String, Set<String>> otherUnique = new HashMap<>();
    /** Tables with rules, row-level security, inheritance parents or children, partitions: locked whole. */
    final Set<String> wholeOnly = new HashSet<>();
    /** Keys, unique indexes and the whole-only tables were read: without them no row is locked alone. */
    boolean keysKnown;

    public static Catalog empty() { return new Catalog(); }

    public Catalog relation(String qualified) {
        String bare = qualified.substring(qualified.indexOf('.') + 1);
        relationsByName.computeIfAbsent(bare, k -> new ArrayList<>()).add(qualified);
        return this;
    }

    public Catalog view(String view, Set<String> bases) { relation(view); viewBases.put(view, bases); return this; }
    public Catalog foreignKey(String child, String parent, boolean cascades) { foreignKeys.add(new ForeignKey(child, parent, cascades)); return this; }
    public Catalog trigger(String table) { triggered.add(table); return this; }
    public Catalog defaultSequence(String table, String seq) {
        defaultSequences.computeIfAbsent(table, k -> new HashSet<>()).add(seq);
        return sequence(seq);
    }
    public Catalog sequence(String qualified) { sequences.add(qualified); return this; }

    /** Whether a statement with these writes may advance a sequence here (nextval, a serial default, an identity column). */
    public boolean advancesSequence(Set<String> writes) {
        for (String w : writes) if (sequences.contains(w)) return true;
        return false;
    }
    public Catalog defaultExpr(String table, String expr) { defaultExprs.computeIfAbsent(table, k -> new ArrayList<>()).add(expr); return this; }
    public Catalog builtins(Set<String> names) { builtinFunctions.addAll(names); return this; }
    public Catalog function(String qualified, String language, String body) {
        functionBodies.computeIfAbsent(qualified, k -> new ArrayList<>()).add(new Function(qualified, language, body));
        return this;
    }
    /** Declares the primary key of {@code table}: columns as "name:type" in key order. */
    public Catalog primaryKey(String table, String... columns) { primaryKeys.put(table, List.of(columns)); return this; }
    /** Declares that keys are complete (as {@link #load} does): tables without a declared key have none. */
    public Catalog keysKnown() { keysKnown = true; return this; }
    public Catalog wholeOnly(String table) { wholeOnly.add(table); return this; }
    public Catalog unique(String table, String column) { otherUnique.computeIfAbsent(table, k -> new HashSet<>()).add(column); return this; }

    /** schema.name for a name as written (quoted parts keep their case); unqualified names by catalog lookup, else public. */
    public String resolve(String written) {
        List<String> parts = splitName(written);
        if (parts.size() >= 2) return parts.get(parts.size() - 2) + "." + parts.get(parts.size() - 1);
        List<String> found = relationsByName.get(parts.get(0));
        if (found != null && found.size() == 1) return found.get(0);
        if (found != null && found.contains("public." + parts.get(0))) return "public." + parts.get(0);
        return "public." + parts.get(0);
    }

    /** The parts of a possibly qualified, possibly quoted name, each as PostgreSQL reads it ({@link SqlLexer}: unquoted parts folded). */
    static List<String> splitName(String written) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        for (SqlLexer.Token t : SqlLexer.tokens(written)) {
            if (t.is(written, ".")) {
                out.add(cur.toString());
                cur.setLength(0);
            } else if (t.word() || t.kind() == SqlLexer.Kind.QUOTED_IDENT) cur.append(t.identifier(written));
            else if (t.significant()) cur.append(SqlLexer.fold(t.text(written)));   // not a name PostgreSQL would take: kept, so it matches nothing
        }
        out.add(cur.toString());
        return out;
    }

    /** Reads the catalog of the database {@code c} is connected to. */
    public static Catalog load(Connection c) throws SQLException {
        Catalog k = new Catalog();
        try (Statement st = c.createStatement()) {
            try (ResultSet rs = st.executeQuery("SELECT n.nspname || '.' || c.relname, c.relkind = 'S' FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                    + "WHERE c.relkind IN ('r','p','v','m','f','S') AND n.nspname NOT IN ('pg_catalog','information_schema') AND n.nspname NOT LIKE 'pg_toast%'")) {
                while (rs.next()) {
                    k.relation(rs.getString(1));
                    if (rs.getBoolean(2)) k.sequence(rs.getString(1));
                }
            }
            // identity columns advance a sequence of their own, which has no default expression naming it
            try (ResultSet rs = st.executeQuery("SELECT tn.nspname || '.' || t.relname, sn.nspname || '.' || s.relname FROM pg_depend d "
                    + "JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S' JOIN pg_namespace sn ON sn.oid = s.relnamespace "
                    + "JOIN pg_class t ON t.oid = d.refobjid JOIN pg_namespace tn ON tn.oid = t.relnamespace "
                    + "WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.deptype = 'i'")) {
                while (rs.next()) k.defaultSequence(rs.getString(1), rs.getString(2));
            }
            try (ResultSet rs = st.executeQuery("SELECT DISTINCT vn.nspname || '.' || v.relname, tn.nspname || '.' || t.relname "
                    + "FROM pg_rewrite r JOIN pg_class v ON v.oid = r.ev_class JOIN pg_namespace vn ON vn.oid = v.relnamespace "
                    + "JOIN pg_depend d ON d.objid = r.oid AND d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass "
                    + "JOIN pg_class t ON t.oid = d.refobjid JOIN pg_namespace tn ON tn.oid = t.relnamespace "
                    + "WHERE v.relkind IN ('v','m') AND t.oid <> v.oid AND vn.nspname NOT IN ('pg_catalog','information_schema')")) {
                while (rs.next()) k.viewBases.computeIfAbsent(rs.getString(1), x -> new HashSet<>()).add(rs.getString(2));
            }
            try (ResultSet rs = st.executeQuery("SELECT cn.nspname || '.' || ch.relname, pn.nspname || '.' || p.relname, "
                    + "(f.confdeltype IN ('c','n','d') OR f.confupdtype IN ('c','n','d')) FROM pg_constraint f "
                    + "JOIN pg_class ch ON ch.oid = f.conrelid JOIN pg_namespace cn ON cn.oid = ch.relnamespace "
                    + "JOIN pg_class p ON p.oid = f.confrelid JOIN pg_namespace pn ON pn.oid = p.relnamespace WHERE f.contype = 'f'")) {
                while (rs.next()) k.foreignKey(rs.getString(1), rs.getString(2), rs.getBoolean(3));
            }
            try (ResultSet rs = st.executeQuery("SELECT DISTINCT n.nspname || '.' || c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                    + "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE NOT t.tgisinternal")) {
                while (rs.next()) k.trigger(rs.getString(1));
            }
            try (ResultSet rs = st.executeQuery("SELECT n.nspname || '.' || c.relname, pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d "
                    + "JOIN pg_class c ON c.oid = d.adrelid JOIN pg_namespace n ON n.oid = c.relnamespace")) {
                while (rs.next()) {
                    String table = rs.getString(1), expr = rs.getString(2);
                    java.util.regex.Matcher m = java.util.regex.Pattern.compile("nextval\\('([^']+)'").matcher(expr);
                    while (m.find()) k.defaultSequence(table, k.resolve(m.group(1)));
                    k.defaultExpr(table, expr);
                }
            }
            try (ResultSet rs = st.executeQuery("SELECT n.nspname || '.' || c.relname, a.attname, t.typname FROM pg_index i "
                    + "JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                    + "CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY k(attnum, ord) "
                    + "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum JOIN pg_type t ON t.oid = a.atttypid "
                    + "WHERE i.indisprimary ORDER BY 1, k.ord")) {
                while (rs.next()) k.primaryKeys.computeIfAbsent(rs.getString(1), x -> new ArrayList<>()).add(rs.getString(2) + ":" + rs.getString(3));
            }
            try (ResultSet rs = st.executeQuery("SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                    + "WHERE c.relkind IN ('r','p','f') AND (c.relhasrules OR c.relrowsecurity OR c.relhassubclass OR c.relispartition "
                    + "OR EXISTS (SELECT 1 FROM pg_inherits h WHERE h.inhrelid = c.oid))")) {
                while (rs.next()) k.wholeOnly(rs.getString(1));
            }
            // other unique indexes and exclusion constraints: a write to their columns conflicts across rows
            try (ResultSet rs = st.executeQuery("SELECT n.nspname || '.' || c.relname, "
                    + "CASE WHEN k.attnum = 0 OR i.indpred IS NOT NULL THEN '*' ELSE a.attname END FROM pg_index i "
                    + "JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                    + "CROSS JOIN LATERAL unnest(i.indkey) k(attnum) LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum "
                    + "WHERE NOT i.indisprimary AND (i.indisunique OR i.indisexclusion)")) {
                while (rs.next()) k.unique(rs.getString(1), rs.getString(2));
            }
            k.keysKnown = true;
            try (ResultSet rs = st.executeQuery("SELECT DISTINCT proname FROM pg_proc WHERE pronamespace = 'pg_catalog'::regnamespace")) {
                while (rs.next()) k.builtinFunctions.add(rs.getString(1));
            }
            // user functions and their bodies; a SQL-standard body (BEGIN ATOMIC, PostgreSQL 14+) has no prosrc to read
            String sqlBody = c.getMetaData().getDatabaseMajorVersion() >= 14 ? "p.prosqlbody IS NULL" : "true";
            try (ResultSet rs = st.executeQuery("SELECT n.nspname || '.' || p.proname, l.lanname, "
                    // a function with its own search_path may name other tables than the session would: not derived
                    + "CASE WHEN p.prokind IN ('f','p') AND " + sqlBody + " AND NOT EXISTS (SELECT 1 FROM unnest(p.proconfig) g "
                    + "WHERE g LIKE 'search\\_path=%') THEN p.prosrc END FROM pg_proc p "
                    + "JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang "
                    + "WHERE n.nspname NOT IN ('pg_catalog','information_schema') ORDER BY p.oid")) {
                while (rs.next()) k.function(rs.getString(1), rs.getString(2), rs.getString(3));
            }
        }
        return k;
    }
}
