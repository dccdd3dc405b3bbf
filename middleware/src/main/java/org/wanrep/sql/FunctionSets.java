package org.wanrep.sql;

import net.sf.jsqlparser.parser.CCJSqlParserUtil;
import net.sf.jsqlparser.schema.Table;
import net.sf.jsqlparser.statement.Statement;
import net.sf.jsqlparser.statement.delete.Delete;
import net.sf.jsqlparser.statement.insert.Insert;
import net.sf.jsqlparser.statement.select.PlainSelect;
import net.sf.jsqlparser.statement.select.Select;
import net.sf.jsqlparser.statement.update.Update;
import net.sf.jsqlparser.util.TablesNamesFinder;
import org.wanrep.lock.TableSet;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The tables a user function reads and writes, derived from its body in the catalog (PL/pgSQL and
 * SQL functions): the SQL statements inside are given to JSqlParser, INSERT/UPDATE/DELETE targets
 * and SELECT ... FOR UPDATE are writes, sequences advanced with {@code nextval('name')} or
 * {@code setval('name', ...)} are writes, calls of other user functions compose. Whatever the
 * derivation cannot follow (dynamic SQL, an unparsable statement, an unknown or other-language
 * function, DDL, a trigger on a written table) makes the function lock every table: never fewer
 * locks than needed. A configured table set overrides the derivation. Every site derives the same
 * sets from the same catalog. One instance per catalog snapshot.
 */
final class FunctionSets {
    /** Words that precede a parenthesis in PL/pgSQL without calling a function. */
    private static final Set<String> PLPGSQL_WORDS = Set.of("if", "elsif", "while", "return", "perform", "when", "case", "query", "next",
            "assert", "cursor", "exit", "continue", "foreach", "loop", "then", "else", "begin", "end", "declare");
    /** Statement starts that the derivation does not follow: every table. */
    private static final Set<String> NOT_FOLLOWED = Set.of("execute", "merge", "create", "alter", "drop", "truncate", "copy", "lock", "grant",
            "revoke", "refresh", "comment", "vacuum", "analyze", "reindex", "cluster", "notify", "listen", "unlisten", "import", "security",
            "table", "do", "discard", "prepare", "deallocate", "reassign", "load", "checkpoint", "commit", "rollback", "savepoint", "release");
    private static final Pattern SEQUENCE_CALL = Pattern.compile("(?i)\\b(nextval|setval)\\s*\\(");
    private static final Pattern SEQUENCE_LITERAL = Pattern.compile("(?i)\\b(?:pg_catalog\\.)?(?:nextval|setval)\\s*\\(\\s*'((?:[^']|'')+)'(?:\\s*::\\s*(?:pg_catalog\\.)?regclass)?\\s*[,)]");
    private static final Pattern ESCAPE_STRING = Pattern.compile("(?i)(^|[^\\w$])e'");
    private static final Pattern PARAM = Pattern.compile("\\$(\\d+)");
    private static final Pattern COLLATE = Pattern.compile("(?i)\\bcollate\\s+(\"(?:[^\"]|\"\")*\"|[\\w.]+)");

    private final Catalog cat;
    private final Map<String, TableSet> configured;
    private final Map<String, TableSet> cache = new ConcurrentHashMap<>();

    FunctionSets(Catalog cat, Map<String, TableSet> configured) {
        this.cat = cat;
        this.configured = configured;
    }

    Catalog catalog() { return cat; }

    /** The configured set for a call as written, else null. */
    TableSet configured(String call) {
        String bare = call.substring(call.lastIndexOf('.') + 1);
        TableSet t = configured.get(call);
        if (t == null) t = configured.get(bare);
        if (t == null) t = configured.get("public." + bare);
        return t;
    }

    /**
     * The set of a call of user function {@code call} (as written, lower case): configured, else
     * derived; null if no user function of that name exists (the caller decides), every table if
     * the body cannot be followed.
     */
    TableSet of(String call) {
        TableSet c = configured(call);
        if (c != null) return c;
        String q = qualify(call);
        if (q == null) return null;
        TableSet cached = cache.get(q);
        if (cached != null) return cached;
        TableSet t = derive(q, new HashSet<>());
        cache.put(q, t);   // only top-level results: inner ones may have been cut at a cycle
        return t;
    }

    /** schema.name of a user function as called, or null if the catalog has none of that name. */
    String qualify(String call) {
        if (call.contains(".")) return cat.functionBodies.containsKey(call) ? call : null;
        if (cat.functionBodies.containsKey("public." + call)) return "public." + call;
        String found = null;
        for (String k : cat.functionBodies.keySet()) {
            if (k.substring(k.indexOf('.') + 1).equals(call)) {
                if (found != null) return null;   // ambiguous without the search_path: unknown
                found = k;
            }
        }
        return found;
    }

    private TableSet derive(String qualified, Set<String> visiting) {
        if (!visiting.add(qualified)) return TableSet.of(Set.of(), Set.of());   // a cycle: its tables are counted where it started
        try {
            TableSet out = TableSet.of(Set.of(), Set.of());
            for (Catalog.Function f : cat.functionBodies.get(qualified)) {   // every overload: the call may mean any
                TableSet t = body(f, visiting);
                out = union(out, t);
                if (out.all()) return out;
            }
            return out;
        } finally {
            visiting.remove(qualified);
        }
    }

    private TableSet body(Catalog.Function f, Set<String> visiting) {
        if (f.body() == null || !(f.language().equals("plpgsql") || f.language().equals("sql"))) return TableSet.allTables();
        String body = stripDirectives(f.body());
        // E'...\'...' escapes are not read by the splitter and scanners here: rather every table than a missed statement
        if (ESCAPE_STRING.matcher(body).find()) return TableSet.allTables();
        Set<String> reads = new HashSet<>(), writes = new HashSet<>();
        TableSet composed = TableSet.of(Set.of(), Set.of());
        // calls anywhere in the body (statements, conditions, assignments)
        int sequenceCalls = 0;
        for (String call : SqlText.functionCalls(body)) {
            String bare = call.substring(call.lastIndexOf('.') + 1);
            if (bare.equals("nextval") || bare.equals("setval")) { sequenceCalls++; continue; }
            if (PLPGSQL_WORDS.contains(bare) && !call.contains(".") && qualify(call) == null) continue;   // IF (...), RETURN (...)
            if (SqlClassifier.WRITING_BUILTINS.contains(bare)) return TableSet.allTables();
            if (call.startsWith("pg_catalog.") || (!call.contains(".") && cat.builtinFunctions.contains(bare))) continue;
            TableSet t = configured(call);
            if (t == null) {
                String q = qualify(call);
                if (q == null) return TableSet.allTables();
                t = derive(q, visiting);
            }
            composed = union(composed, t);
            if (composed.all()) return composed;
        }
        if (sequenceCalls > 0) {
            Matcher all = SEQUENCE_CALL.matcher(body), lit = SEQUENCE_LITERAL.matcher(body);
            int calls = 0, literal = 0;
            while (all.find()) calls++;
            while (lit.find()) {
                literal++;
                writes.add(cat.resolve(lit.group(1).replace("''", "'")));
            }
            if (literal != calls) return TableSet.allTables();   // nextval(variable): which sequence is not known
        }
        // the statements
        List<String> statements = new ArrayList<>();
        for (String piece : UnitClassifier.splitStatements(body)) {
            if (!statements(piece, statements)) return TableSet.allTables();
        }
        for (String sub : subqueries(body)) statements.add(sub);
        for (String s : statements) {
            if (!statement(s, reads, writes)) return TableSet.allTables();
        }
        TableSet own = expand(reads, writes);
        return union(own, composed);
    }

    /** PL/pgSQL compiler directives ({@code #variable_conflict use_column}) on lines of their own. */
    private static String stripDirectives(String body) {
        return body.replaceAll("(?m)^\\s*#[^\\n]*$", " ");
    }

    private record Word(String word, int start, int end, int depth) {}

    /** Words of {@code s} with their parenthesis depth, skipping literals, quoted identifiers, comments and dollar strings. */
    private static List<Word> words(String s) {
        List<Word> out = new ArrayList<>();
        int depth = 0;
        SqlLexer.Token prev = null;
        for (SqlLexer.Token t : SqlLexer.tokens(s)) {
            if (!t.significant()) continue;
            if (t.is(s, "(")) depth++;
            else if (t.is(s, ")")) depth--;
            else if (t.word() && !(prev != null && prev.is(s, "."))) out.add(new Word(t.identifier(s), t.start(), t.end(), depth));
            prev = t;
        }
        return out;
    }

    /**
     * The SQL statements in one semicolon-separated piece of a body (after control flow such as
     * IF ... THEN, LOOP, EXCEPTION WHEN ... THEN): false if the piece holds something not followed.
     */
    private static boolean statements(String piece, List<String> out) {
        List<Word> ws = words(piece);
        int from = 0;   // text before this offset is consumed
        for (int k = 0; k < ws.size(); k++) {
            Word w = ws.get(k);
            if (w.start() < from || w.depth() != 0) continue;
            String x = w.word();
            if (NOT_FOLLOWED.contains(x)) return false;
            if (x.equals("from")) return false;   // PL/pgSQL expression with FROM (x := count(*) FROM t): not followed
            if (x.equals("return") && k + 1 < ws.size() && !ws.get(k + 1).word().equals("query")) {
                // RETURN expr: its parenthesised subqueries are read elsewhere; RETURN count(*) FROM t is not followed
                for (int m = k + 1; m < ws.size(); m++) if (ws.get(m).depth() == 0 && ws.get(m).word().equals("from")) return false;
                return true;
            }
            if (x.equals("with") && k > 0 && (ws.get(k - 1).word().equals("time") || ws.get(k - 1).word().equals("timestamp"))) continue;
            boolean perform = x.equals("perform");
            if (!(perform || x.equals("select") || x.equals("with") || x.equals("insert") || x.equals("update") || x.equals("delete"))) continue;
            int end = piece.length();
            // FOR r IN <query> LOOP: the query ends at LOOP, statements follow
            boolean inLoop = k > 0 && ws.get(k - 1).word().equals("in");
            int next = -1;
            if (inLoop) {
                for (int m = k + 1; m < ws.size(); m++) {
                    if (ws.get(m).depth() == 0 && ws.get(m).word().equals("loop")) { end = ws.get(m).start(); next = ws.get(m).end(); break; }
                }
                if (next < 0) return false;
            }
            String stmt = perform ? "SELECT" + piece.substring(w.end(), end) : piece.substring(w.start(), end);
            out.add(stmt);
            if (next < 0) return true;
            from = next;
        }
        return true;
    }

    /** Parenthesised queries anywhere in the body ({@code IF EXISTS (SELECT ...)}, {@code x := (SELECT ...)}). */
    private static List<String> subqueries(String body) {
        List<String> out = new ArrayList<>();
        List<Word> ws = words(body);
        for (Word w : ws) {
            if (w.depth() == 0 || !(w.word().equals("select") || w.word().equals("with"))) continue;
            int open = w.start() - 1;
            while (open >= 0 && Character.isWhitespace(body.charAt(open))) open--;
            if (open < 0 || body.charAt(open) != '(') continue;
            int close = matching(body, open);
            if (close < 0) continue;
            out.add(body.substring(w.start(), close));
        }
        return out;
    }

    /** Index of the parenthesis closing the one at {@code open} (literals, names and comments skipped), or -1. */
    private static int matching(String s, int open) {
        int depth = 0;
        for (SqlLexer.Token t : SqlLexer.tokens(s, open, s.length())) {
            if (t.is(s, "(")) depth++;
            else if (t.is(s, ")") && --depth == 0) return t.start();
        }
        return -1;
    }

    private static final Pattern INTO = Pattern.compile("(?is)\\Ginto\\s+(strict\\s+)?[\\w.$\"]+(\\s*,\\s*[\\w.$\"]+)*");
    private static final Pattern FOR_LOCK = Pattern.compile("(?is).*\\bfor\\s+(update|share|no\\s+key\\s+update|key\\s+share)\\b.*");

    /** Adds one statement's tables; false if it cannot be followed. */
    private boolean statement(String stmt, Set<String> reads, Set<String> writes) {
        // PL/pgSQL INTO targets are variables, not tables (INSERT INTO keeps its table)
        List<Word> ws = words(stmt);
        StringBuilder b = new StringBuilder();
        int copied = 0;
        for (int k = 0; k < ws.size(); k++) {
            Word w = ws.get(k);
            if (w.depth() != 0 || !w.word().equals("into") || w.start() < copied) continue;
            if (k > 0 && (ws.get(k - 1).word().equals("insert") || ws.get(k - 1).word().equals("merge"))) continue;
            Matcher m = INTO.matcher(stmt);
            if (!m.find(w.start()) || m.start() != w.start()) return false;
            b.append(stmt, copied, w.start()).append(' ');
            copied = m.end();
        }
        String sql = b.append(stmt.substring(copied)).toString();
        sql = PARAM.matcher(sql).replaceAll("?");
        sql = COLLATE.matcher(sql).replaceAll(" ");   // JSqlParser does not read ORDER BY x COLLATE "C"; names no table
        // a data-modifying WITH or a write nested anywhere but the statement's own: not followed
        String lower = SqlText.normalize(sql).toLowerCase(Locale.ROOT);
        int writesNamed = count(lower, "\\binsert\\b") + count(lower, "\\bdelete\\b") + count(lower, "\\bmerge\\b")
                + count(lower, "\\bupdate\\b") - count(lower, "\\b(for|no\\s+key|do)\\s+update\\b");
        Statement parsed;
        Set<String> named;
        try {
            if (sql.length() > SqlClassifier.MAX_PARSED_CHARS) return false;   // not followed: every table
            parsed = CCJSqlParserUtil.parse(sql);
            named = new TablesNamesFinder().getTables(parsed);
        } catch (Exception | StackOverflowError | OutOfMemoryError e) {
            return false;
        }
        if (writesNamed != (parsed instanceof Select ? 0 : 1)) return false;
        Set<String> mine = new HashSet<>();
        for (String n : named) mine.add(cat.resolve(n));
        reads.addAll(mine);
        switch (parsed) {
            case Insert i -> writes.add(cat.resolve(i.getTable().getFullyQualifiedName()));
            case Update u -> writes.add(cat.resolve(u.getTable().getFullyQualifiedName()));
            case Delete d -> {
                if (d.getTable() != null) writes.add(cat.resolve(d.getTable().getFullyQualifiedName()));
                if (d.getTables() != null) for (Table t : d.getTables()) writes.add(cat.resolve(t.getFullyQualifiedName()));
            }
            case Select s -> {
                if (s instanceof PlainSelect p && p.getIntoTables() != null) return false;
                if (s instanceof PlainSelect p && p.getForMode() != null || FOR_LOCK.matcher(lower).matches()) writes.addAll(mine);
            }
            default -> { return false; }
        }
        return true;
    }

    private static int count(String s, String regex) {
        Matcher m = Pattern.compile(regex).matcher(s);
        int c = 0;
        while (m.find()) c++;
        return c;
    }

    /**
     * Views stand for their base tables, cascading foreign keys write the children, checks read the
     * parents, defaults advance their sequences; a trigger on a written table: every table.
     */
    private TableSet expand(Set<String> reads0, Set<String> writes0) {
        Set<String> reads = views(reads0), writes = views(writes0);
        ArrayDeque<String> todo = new ArrayDeque<>(writes);
        while (!todo.isEmpty()) {
            String w = todo.poll();
            for (Catalog.ForeignKey fk : cat.foreignKeys) {
                if (fk.parent().equals(w)) {
                    if (fk.cascades() && writes.add(fk.child())) todo.add(fk.child());
                    else reads.add(fk.child());
                }
                if (fk.child().equals(w)) reads.add(fk.parent());
            }
        }
        Set<String> sequences = new HashSet<>();
        for (String w : writes) {
            if (cat.triggered.contains(w)) return TableSet.allTables();
            sequences.addAll(cat.defaultSequences.getOrDefault(w, Set.of()));
        }
        writes.addAll(sequences);
        reads.removeAll(writes);
        return TableSet.of(reads, writes);
    }

    private Set<String> views(Set<String> names) { return SqlClassifier.expandViews(cat, names); }

    static TableSet union(TableSet a, TableSet b) {
        if (a.all() || b.all()) return TableSet.allTables();
        Set<String> r = new HashSet<>(a.reads()), w = new HashSet<>(a.writes());
        r.addAll(b.reads());
        w.addAll(b.writes());
        r.removeAll(w);
        return TableSet.of(r, w);
    }
}
