package org.wanrep.sql;

import org.wanrep.wire.Messages;
import org.wanrep.wire.WireMessage;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Makes the transaction time replicable: now(), current_timestamp and their relatives become an
 * expression that reads the timestamp the origin fixed for the transaction (setting
 * {@code wanrep.ts}, set locally in every replicated transaction at every site) and falls back to
 * now() where none is set (local reads). Being an expression, not a literal, it also serves named
 * statements prepared once and executed in many transactions. Only code is rewritten, never string
 * literals, quoted identifiers, comments or dollar-quoted bodies. DDL is rewritten too: a column
 * {@code DEFAULT now()} then reads the replicated time as well, instead of each site's clock.
 * Bodies of functions, procedures and DO blocks in SQL or PL/pgSQL are rewritten too, so that a
 * function every site runs reads the origin's time; in them also clock_timestamp() and
 * statement_timestamp() (the origin's transaction time: one value per transaction) and
 * gen_random_uuid() (built from random(), which every replicated transaction seeds alike).
 */
public final class TimeRewriting {
    private TimeRewriting() {}

    static final Pattern FUNCS = Pattern.compile(
            "(?<![\\w.$])(?:pg_catalog\\s*\\.\\s*)?(now\\s*\\(\\s*\\)|transaction_timestamp\\s*\\(\\s*\\)|current_timestamp(\\s*\\(\\s*\\d+\\s*\\))?|localtimestamp(\\s*\\(\\s*\\d+\\s*\\))?|current_date|localtime(\\s*\\(\\s*\\d+\\s*\\))?|current_time(\\s*\\(\\s*\\d+\\s*\\))?)(?![A-Za-z0-9_$])",
            Pattern.CASE_INSENSITIVE);
    private static final DateTimeFormatter TS = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSS").withZone(ZoneOffset.UTC);

    /** What inside a body also differs per site: the wall clock and random UUIDs. */
    private static final Pattern BODY_FUNCS = Pattern.compile(
            "(?<![\\w.$])(?:pg_catalog\\s*\\.\\s*)?(clock_timestamp|statement_timestamp|gen_random_uuid)\\s*\\(\\s*\\)", Pattern.CASE_INSENSITIVE);
    private static final String UUID_EXPR = "(pg_catalog.md5(pg_catalog.random()::text || pg_catalog.random()::text)::uuid)";

    /** The setting that holds a replicated transaction's timestamp. */
    public static final String SETTING = "wanrep.ts";
    private static final String TS_EXPR = "(coalesce(nullif(pg_catalog.current_setting('" + SETTING
            + "', true), '')::timestamptz, pg_catalog.now()))";

    /** The request with every Query and Parse text rewritten (the same list if nothing changes). */
    public static List<WireMessage> rewrite(List<WireMessage> unit) {
        List<WireMessage> out = null;
        for (int i = 0; i < unit.size(); i++) {
            WireMessage m = unit.get(i);
            if (m.kind() != 'Q' && m.kind() != 'P') continue;
            String text = text(m), changed = rewrite(text);
            if (changed.equals(text)) continue;
            if (out == null) out = new ArrayList<>(unit);
            out.set(i, m.kind() == 'Q' ? WireMessage.query(changed) : Messages.withParseQuery(m, changed));
        }
        return out == null ? unit : out;
    }

    private static String text(WireMessage m) { return m.kind() == 'Q' ? m.queryText() : Messages.parseQuery(m); }

    /** The literal form of a timestamp for {@link #SETTING}. */
    public static String format(long micros) {
        long seconds = Math.floorDiv(micros, 1_000_000L);
        int fraction = (int) Math.floorMod(micros, 1_000_000L);
        java.time.LocalDateTime t = java.time.LocalDateTime.ofEpochSecond(seconds, 0, ZoneOffset.UTC);
        // every replicated transaction ships one: written by hand, the formatter's own cost was a tenth of an executor's
        if (t.getYear() < 1000 || t.getYear() > 9999) return TS.format(Instant.ofEpochSecond(seconds, fraction * 1000L)) + "+00";
        StringBuilder b = new StringBuilder(29);
        b.append(t.getYear()).append('-');
        two(b, t.getMonthValue()).append('-');
        two(b, t.getDayOfMonth()).append(' ');
        two(b, t.getHour()).append(':');
        two(b, t.getMinute()).append(':');
        two(b, t.getSecond()).append('.');
        String f = Integer.toString(fraction);
        for (int i = f.length(); i < 6; i++) b.append('0');
        return b.append(f).append("+00").toString();
    }

    private static StringBuilder two(StringBuilder b, int v) { return (v < 10 ? b.append('0') : b).append(v); }


    /**
     * The SQL with time functions replaced by literals of the same type, in data-manipulating
     * statements only: in DDL they are definitions (a column default, a view) that must stay functions.
     */
    private static final java.util.concurrent.ConcurrentHashMap<String, String> CACHE = new java.util.concurrent.ConcurrentHashMap<>();

    public static String rewrite(String sql) {
        if (!mentionsTime(sql) && !mayDefineCode(sql)) return sql;   // nearly every text: no cache entry, no regex
        String done = CACHE.get(sql);
        if (done != null) return done;
        done = rewriteStatement(sql);
        if (CACHE.size() >= 20_000) CACHE.clear();
        CACHE.put(sql, done);
        return done;
    }

    /** Whether the text contains (case-insensitively) a word a time function starts with. */
    static boolean mentionsTime(String sql) {
        for (int i = 0, n = sql.length(); i < n; i++) if (timeWordAt(sql, i, false)) return true;
        return false;
    }

    /** Whether a word a time function starts with (or, with {@code qualifier}, pg_catalog) begins at {@code i}. */
    private static boolean timeWordAt(String s, int i, boolean qualifier) {
        return switch (s.charAt(i) | 0x20) {
            case 'n' -> s.regionMatches(true, i, "now", 0, 3);
            case 'c' -> s.regionMatches(true, i, "current_", 0, 8);
            case 'l' -> s.regionMatches(true, i, "localtime", 0, 9);
            case 't' -> s.regionMatches(true, i, "transaction_timestamp", 0, 21);
            case 'p' -> qualifier && s.regionMatches(true, i, "pg_catalog", 0, 10);
            default -> false;
        };
    }

    /**
     * Whether a function body (SQL or PL/pgSQL source) reads the clock or makes random UUIDs in a way
     * no site shares: a body defined outside the proxy, never rewritten. Bodies rewritten here pass.
     */
    public static boolean readsClock(String body) {
        String stripped = body.replace(TS_EXPR, "").replace(UUID_EXPR, "");
        return !rewriteStatement(stripped, true).equals(stripped);
    }

    /**
     * The text without the replicated clock this class wrote into it: a value every site computes
     * alike, which reads no table (so it keeps the row-level classes of a statement it stamps).
     */
    public static String withoutReplicatedClock(String sql) {
        return sql.indexOf(SETTING) < 0 ? sql : sql.replace(TS_EXPR, "NULL");
    }

    /** A cheap first look: only texts that start with CREATE or DO can define code. */
    private static boolean mayDefineCode(String sql) {
        int i = 0, n = sql.length();
        while (i < n && Character.isWhitespace(sql.charAt(i))) i++;
        if (i >= n) return false;
        char c = (char) (sql.charAt(i) | 0x20);
        return (c == 'c' || c == 'd') && FunctionBodies.definesCode(sql.substring(i));
    }

    private static String rewriteStatement(String sql) { return rewriteStatement(sql, false); }

    private static String rewriteStatement(String sql, boolean body) {
        String ts = TS_EXPR;
        boolean bodiesToo = !body && FunctionBodies.definesCode(sql) && FunctionBodies.readableLanguage(sql);
        StringBuilder out = new StringBuilder(sql.length() + 32);
        int codeStart = 0;
        for (SqlLexer.Token t : SqlLexer.tokens(sql)) {
            SqlLexer.Kind k = t.kind();
            if (k != SqlLexer.Kind.STRING && k != SqlLexer.Kind.QUOTED_IDENT && k != SqlLexer.Kind.COMMENT && k != SqlLexer.Kind.DOLLAR_STRING) continue;
            out.append(rewriteCode(sql.substring(codeStart, t.start()), ts, body));
            if (k == SqlLexer.Kind.DOLLAR_STRING && bodiesToo && !t.unterminated()) {
                // the body of a function or DO block in SQL or PL/pgSQL: its code reads the replicated time too
                int from = t.bodyStart(sql), to = t.bodyEnd(sql);
                out.append(sql, t.start(), from).append(rewriteStatement(sql.substring(from, to), true)).append(sql, to, t.end());
            } else out.append(sql, t.start(), t.end());   // literals, names, comments, other dollar-quoted text: left as they are
            codeStart = t.end();
        }
        out.append(rewriteCode(sql.substring(codeStart), ts, body));
        return out.toString();
    }

    private static String rewriteCode(String code, String ts, boolean body) {
        String timed = rewriteCode(code, ts);
        if (!body) return timed;
        Matcher m = BODY_FUNCS.matcher(timed);
        StringBuilder b = new StringBuilder();
        while (m.find()) {
            String f = m.group(1).toLowerCase(Locale.ROOT);
            m.appendReplacement(b, Matcher.quoteReplacement(f.equals("gen_random_uuid") ? UUID_EXPR : "(" + ts + ")"));
        }
        m.appendTail(b);
        return b.toString();
    }

    /**
     * The regular expression is tried only where a time word (or pg_catalog) begins: it found nothing in most texts
     * that mention time in a literal or a name, and searching it from every position was most of the rewrite's cost.
     */
    static String rewriteCode(String code, String ts) {
        Matcher m = null;
        StringBuilder b = null;
        int copied = 0, n = code.length();
        for (int i = 0; i < n; i++) {
            if (!timeWordAt(code, i, true)) continue;
            if (m == null) m = FUNCS.matcher(code).useTransparentBounds(true);   // its look-behind sees the text before each try
            m.region(i, n);
            if (!m.lookingAt()) continue;
            if (b == null) b = new StringBuilder(n + 64);
            b.append(code, copied, i).append(literal(m.group(1), ts));
            copied = m.end();
            i = copied - 1;
        }
        return b == null ? code : b.append(code, copied, n).toString();
    }

    /** The replicated clock in the type of time function {@code f} (as written, in any case and spacing). */
    static String literal(String f, String ts) {
        String g = WHITE.matcher(f.toLowerCase(Locale.ROOT)).replaceAll("");
        if (g.startsWith("current_date")) return "(" + ts + ")::date";
        if (g.startsWith("localtimestamp")) return "(" + ts + ")::timestamp";
        if (g.startsWith("localtime")) return "(" + ts + ")::time";
        if (g.startsWith("current_time") && !g.startsWith("current_timestamp")) return "(" + ts + ")::timetz";
        return "(" + ts + ")";
    }

    private static final Pattern WHITE = Pattern.compile("\\s");
}
