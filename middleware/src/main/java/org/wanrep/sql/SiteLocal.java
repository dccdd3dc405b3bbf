package org.wanrep.sql;

import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * What a statement reads that belongs to one site, not to the replicated data: an update that writes it would
 * store a different value at every site under symmetric execution. Functions of that kind are in
 * {@code SqlClassifier.NON_DETERMINISTIC}; this covers the rest, by token:
 * <ul>
 *   <li>system columns ({@code xmin}, {@code xmax}, {@code cmin}, {@code cmax}, {@code ctid}, {@code tableoid}):
 *       transaction ids, tuple positions and OIDs are each site's own;</li>
 *   <li>a cast to {@code oid}: OIDs differ between replicas (a state transfer's restore assigns new ones);</li>
 *   <li>{@code current_setting} of a server setting (port, data_directory, work_mem...): a site's configuration.
 *       Settings every replicated transaction carries from its origin, and custom ({@code app.x}) ones, are read
 *       alike;</li>
 *   <li>system catalogs and statistics views ({@code pg_stat_activity}, {@code pg_settings}, {@code pg_class}...),
 *       see {@link #systemRelation}.</li>
 * </ul>
 * Pure and deterministic: every site refuses the same requests.
 */
public final class SiteLocal {
    private SiteLocal() {}

    private static final Set<String> SYSTEM_COLUMNS = Set.of("xmin", "xmax", "cmin", "cmax", "ctid", "tableoid");

    /**
     * Settings every replicated transaction carries from its origin whatever their source (frontend.SessionSettings
     * ships them): they change how text is read or values are written, and a site's configuration may differ.
     */
    public static final Set<String> CARRIED_SETTINGS = Set.of("timezone", "datestyle", "intervalstyle", "search_path", "extra_float_digits",
            "standard_conforming_strings", "bytea_output", "default_text_search_config",
            "xmlbinary", "xmloption", "client_encoding", "backslash_quote", "array_nulls", "transform_null_equals");

    /**
     * Built-ins that read a server's own files or storage: each site's file system and sizes differ
     * ({@code SqlClassifier.NON_DETERMINISTIC} refuses them in updates, {@code FunctionBodies} in writing bodies).
     */
    public static final Set<String> SERVER_FUNCTIONS = Set.of("pg_read_file", "pg_read_binary_file", "pg_stat_file", "pg_ls_dir",
            "pg_ls_logdir", "pg_ls_waldir", "pg_ls_tmpdir", "pg_ls_archive_statusdir", "pg_current_logfile", "lo_import", "lo_export",
            "pg_database_size", "pg_relation_size", "pg_table_size", "pg_indexes_size", "pg_total_relation_size", "pg_conf_load_time",
            "txid_current_snapshot", "pg_current_snapshot");

    /**
     * Whether {@code stmt} may call current_setting(), whose verdict in {@link #reason} depends on its literal
     * argument. The replicated clock that {@link TimeRewriting} writes for now() reads {@code wanrep.ts}, a setting
     * every site is given: only that exact expression is left out, so pgbench's history insert keeps its shape cached
     * while any other call (the same shape naming another setting included) still counts.
     */
    public static boolean readsSetting(String stmt) {
        return TimeRewriting.withoutReplicatedClock(stmt).toLowerCase(Locale.ROOT).contains("current_setting");
    }

    /** Why {@code stmt} reads something of this site only, or null. */
    public static String reason(String stmt) {
        List<SqlLexer.Token> ts = SqlLexer.tokens(stmt).stream().filter(SqlLexer.Token::significant).toList();
        // COPY ... FROM 'file' or FROM PROGRAM: every server would read its own file or run its own program
        if (!ts.isEmpty() && ts.get(0).word() && ts.get(0).identifier(stmt).equals("copy"))
            for (int i = 1; i + 1 < ts.size(); i++)
                if (ts.get(i).word() && ts.get(i).identifier(stmt).equals("from")
                        && (ts.get(i + 1).kind() == SqlLexer.Kind.STRING || (ts.get(i + 1).word() && ts.get(i + 1).identifier(stmt).equals("program"))))
                    return "COPY from a server file or program (each site would read its own; COPY FROM STDIN, psql's \\copy, carries the data)";
        for (int i = 0; i < ts.size(); i++) {
            SqlLexer.Token t = ts.get(i);
            if (!t.word()) continue;
            String w = t.identifier(stmt);
            SqlLexer.Token prev = i > 0 ? ts.get(i - 1) : null, next = i + 1 < ts.size() ? ts.get(i + 1) : null;
            boolean called = next != null && next.is(stmt, "(");
            // a column reference (not a function, not a name after AS that merely labels an output column)
            if (SYSTEM_COLUMNS.contains(w) && !called && !(prev != null && prev.word() && prev.identifier(stmt).equals("as")))
                return "the system column " + w;
            if (w.equals("oid") && prev != null && (prev.is(stmt, "::") || (prev.word() && prev.identifier(stmt).equals("as") && castContext(stmt, ts, i))))
                return "a cast to oid (OIDs differ between replicas)";
            // what they skip or refuse depends on the row locks held at that moment at that site (a certifying block's, say)
            if (w.equals("nowait") || (w.equals("skip") && next != null && next.word() && next.identifier(stmt).equals("locked")))
                return (w.equals("nowait") ? "NOWAIT" : "SKIP LOCKED") + " (its outcome depends on the locks held at each site)";
            // a cursor's rows come in each replica's order unless its query sorted them, which this statement cannot show
            if (w.equals("current") && next != null && next.word() && next.identifier(stmt).equals("of") && prev != null && prev.word()
                    && prev.identifier(stmt).equals("where"))
                return "WHERE CURRENT OF a cursor (its rows may come in another order at another site; name the row by its key)";
            if (w.equals("current_setting") && called) {
                SqlLexer.Token arg = i + 2 < ts.size() ? ts.get(i + 2) : null;
                String name = arg != null && arg.kind() == SqlLexer.Kind.STRING && arg.text(stmt).startsWith("'")
                        ? arg.text(stmt).substring(1, Math.max(1, arg.text(stmt).length() - 1)).replace("''", "'").toLowerCase(Locale.ROOT) : null;
                if (name == null) return "current_setting() of a setting named at run time";
                if (!name.contains(".") && !CARRIED_SETTINGS.contains(name)) return "current_setting('" + name + "'), a setting of this site's server,";
            }
        }
        return null;
    }

    /**
     * Whether {@code stmt} orders its rows: an ORDER BY anywhere in it (not proven to be on a unique key, nor in the
     * subquery that needs it: a first line of defence). Rows otherwise come in each replica's physical order, which
     * differs once vacuum or a state transfer has placed rows differently.
     */
    public static boolean ordered(String stmt) {
        List<SqlLexer.Token> ts = SqlLexer.tokens(stmt).stream().filter(SqlLexer.Token::significant).toList();
        for (int i = 0; i + 1 < ts.size(); i++)
            if (ts.get(i).word() && ts.get(i).identifier(stmt).equals("order") && ts.get(i + 1).word() && ts.get(i + 1).identifier(stmt).equals("by"))
                return true;
        return false;
    }

    /** Why {@code stmt} picks rows by each replica's order (LIMIT, OFFSET or FETCH without ORDER BY), or null. */
    public static String unorderedLimit(String stmt) {
        for (SqlLexer.Token t : SqlLexer.tokens(stmt)) {
            if (!t.word()) continue;
            String w = t.identifier(stmt);
            if (w.equals("limit") || w.equals("offset") || w.equals("fetch"))
                return ordered(stmt) ? null : w.toUpperCase(Locale.ROOT) + " without ORDER BY (which rows it picks depends on each replica's physical order)";
        }
        return null;
    }

    /** Whether the {@code AS} before token {@code i} belongs to a {@code CAST(... AS oid)}: a CAST( opened before it and not yet closed. */
    private static boolean castContext(String stmt, List<SqlLexer.Token> ts, int i) {
        int depth = 0;
        for (int j = i - 2; j >= 0; j--) {
            SqlLexer.Token t = ts.get(j);
            if (t.is(stmt, ")")) depth++;
            else if (t.is(stmt, "(")) {
                if (depth == 0) return j > 0 && ts.get(j - 1).word() && ts.get(j - 1).identifier(stmt).equals("cast");
                depth--;
            }
        }
        return false;
    }

    /**
     * Whether a relation a statement names, as written ({@code named}), is a system catalog or statistics view rather
     * than a table of the replicated data: in schema pg_catalog, information_schema or pg_toast, or an unqualified
     * {@code pg_...} name the catalog does not know as a user relation.
     */
    public static boolean systemRelation(String named, Catalog cat) {
        List<String> parts = Catalog.splitName(named);
        String bare = parts.get(parts.size() - 1);
        if (parts.size() >= 2) {
            String schema = parts.get(parts.size() - 2);
            return schema.equals("pg_catalog") || schema.equals("information_schema") || schema.startsWith("pg_toast");
        }
        return bare.startsWith("pg_") && !cat.relationsByName.containsKey(bare);
    }
}
