package org.wanrep.sql;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What in a function, procedure or DO body cannot be made to give the same result at every site
 * when every site runs it (symmetric execution). The clock functions and gen_random_uuid() are
 * rewritten before this runs ({@code frontend.TimeRewriting}) and random() is seeded alike, so what
 * is left to find is: a FOR loop over a query without ORDER BY whose body writes (rows come in each
 * replica's physical order, so numbering or choosing by that order differs), LIMIT without ORDER
 * BY, and built-ins whose value belongs to one server or session. A text this cannot read is not
 * judged here; unknown function calls lock every table elsewhere.
 */
public final class FunctionBodies {
    private FunctionBodies() {}

    private static final Pattern DEFINES = Pattern.compile("(?is)^\\s*(create\\s+(or\\s+replace\\s+)?(function|procedure)\\b|do\\b)");
    private static final Pattern NAME = Pattern.compile("(?is)^\\s*create\\s+(?:or\\s+replace\\s+)?(?:function|procedure)\\s+([A-Za-z0-9_.\"]+)");
    private static final Pattern LANGUAGE = Pattern.compile("(?is)\\blanguage\\s+'?\"?([a-z0-9_]+)");
    private static final Pattern FOR_QUERY = Pattern.compile("(?is)\\bfor\\s+[A-Za-z_][A-Za-z_0-9.,\\s]*?\\s+in\\s+(select|with|execute)\\b(.*?)\\bloop\\b(.*?)\\bend\\s+loop\\b");
    private static final Pattern LIMIT = Pattern.compile("(?is)\\blimit\\b");
    private static final Pattern ORDER_BY = Pattern.compile("(?is)\\border\\s+by\\b");
    private static final Pattern WRITES = Pattern.compile("(?is)\\b(insert|update|delete|merge|nextval|setval|return\\s+next|perform)\\b");
    /** Values of one server or one session: never the same at every site. */
    static final Set<String> SITE_BOUND = java.util.stream.Stream.concat(java.util.stream.Stream.of("pg_backend_pid", "txid_current", "txid_current_if_assigned", "pg_current_xact_id",
            "pg_current_xact_id_if_assigned", "inet_server_addr", "inet_server_port", "inet_client_addr", "inet_client_port",
            "pg_postmaster_start_time", "pg_current_wal_lsn", "uuid_generate_v1", "uuid_generate_v1mc", "uuid_generate_v4", "random_normal",
            "timeofday", "pg_sleep"),
            SiteLocal.SERVER_FUNCTIONS.stream()).collect(java.util.stream.Collectors.toUnmodifiableSet());   // and a server's own files and sizes

    /** Whether {@code stmt} defines a function or procedure or runs a DO block. */
    public static boolean definesCode(String stmt) { return DEFINES.matcher(stmt).lookingAt(); }

    /** The function's name as written, or "DO block". */
    public static String name(String stmt) {
        Matcher m = NAME.matcher(stmt);
        return m.lookingAt() ? m.group(1) : "DO block";
    }

    /** Whether the body is SQL or PL/pgSQL (DO blocks default to PL/pgSQL): the languages wanrep reads. */
    public static boolean readableLanguage(String stmt) {
        Matcher m = LANGUAGE.matcher(stmt);
        String lang = null;
        while (m.find()) lang = m.group(1).toLowerCase(Locale.ROOT);   // the clause after the body, if any, is the last
        if (lang == null) return true;   // DO defaults to PL/pgSQL; SQL-standard bodies (RETURN, BEGIN ATOMIC) have no LANGUAGE
        return lang.equals("plpgsql") || lang.equals("sql");
    }

    /**
     * The constructs in the bodies of {@code stmt} that would give different results at different
     * sites, each named with a short excerpt; empty when there are none.
     */
    public static List<String> problems(String stmt) {
        List<String> out = new ArrayList<>();
        if (!definesCode(stmt)) return out;
        if (!readableLanguage(stmt)) {
            Matcher m = LANGUAGE.matcher(stmt);
            String lang = "?";
            while (m.find()) lang = m.group(1);
            out.add("its language " + lang + " (wanrep reads SQL and PL/pgSQL bodies only)");
            return out;
        }
        for (String body : bodies(stmt)) {
            String code = stripLiteralsAndComments(body);
            Matcher f = FOR_QUERY.matcher(code);
            while (f.find()) {
                String query = f.group(1) + f.group(2), loop = f.group(3);
                if (f.group(1).equalsIgnoreCase("execute")) {
                    if (WRITES.matcher(loop).find()) out.add("a FOR loop over dynamic SQL (EXECUTE) that writes: " + excerpt(f.group()));
                } else if (!ORDER_BY.matcher(query).find() && WRITES.matcher(loop).find()) {
                    out.add("a FOR loop over a query without ORDER BY that writes (rows come in each replica's own order): " + excerpt(f.group()));
                }
            }
            boolean writes = WRITES.matcher(code).find();   // a body that writes nothing cannot make replicas differ by its order
            for (String piece : code.split(";")) {
                if (writes && LIMIT.matcher(piece).find() && !ORDER_BY.matcher(piece).find())
                    out.add("LIMIT without ORDER BY (which rows it keeps depends on each replica's order): " + excerpt(piece));
            }
            // system columns, oids, server settings, COPY from a server file, cursors: read on the body as written
            // (custom settings like current_setting('app.tenant') are named by their literal)
            String local = writes ? SiteLocal.reason(body) : null;
            if (local != null) out.add(local);
            for (String fn : SqlText.functionCalls(code)) {
                String bare = fn.substring(fn.lastIndexOf('.') + 1).toLowerCase(Locale.ROOT);
                if (SITE_BOUND.contains(bare)) out.add(bare + "() (its value belongs to one server or session)");
            }
        }
        return out;
    }

    /**
     * The same judgement for a function already in the catalog (its language and {@code prosrc}), e.g.
     * one created directly in a replica: also a body that reads the clock without the proxy's rewriting.
     */
    public static List<String> problemsOfBody(String language, String body) {
        // bodies in other languages (C, internal...) are not read: their calls lock every table, as before
        if (body == null || !(language.equalsIgnoreCase("plpgsql") || language.equalsIgnoreCase("sql"))) return List.of();
        String tag = "$wanrep_body$";
        List<String> out = new ArrayList<>(problems("CREATE FUNCTION f() LANGUAGE " + language + " AS " + tag + body + tag));
        if (TimeRewriting.readsClock(body))
            out.add("the clock or gen_random_uuid() in a body not defined through wanrep (each site would read its own)");
        return out;
    }

    /** The dollar-quoted bodies of the statement (the AS clause or the DO block), outermost only. */
    static List<String> bodies(String stmt) {
        List<String> out = new ArrayList<>();
        for (SqlLexer.Token t : SqlLexer.tokens(stmt)) {
            if (t.kind() == SqlLexer.Kind.DOLLAR_STRING && !t.unterminated()) out.add(stmt.substring(t.bodyStart(stmt), t.bodyEnd(stmt)));
        }
        return out;
    }

    /**
     * The code with string literals, quoted identifiers and comments blanked (their words are not
     * code); nested dollar-quoted strings (EXECUTE $q$ ... $q$) stay, read as code.
     */
    static String stripLiteralsAndComments(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (SqlLexer.Token t : SqlLexer.tokens(s)) {
            switch (t.kind()) {
                case STRING -> b.append("''");
                case QUOTED_IDENT -> b.append("\"x\"");
                case COMMENT -> b.append(' ');
                default -> b.append(s, t.start(), t.end());
            }
        }
        return b.toString();
    }

    private static String excerpt(String s) {
        String one = s.replaceAll("\\s+", " ").trim();
        return one.length() > 80 ? one.substring(0, 77) + "..." : one;
    }
}
