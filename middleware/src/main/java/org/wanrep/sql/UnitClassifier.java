package org.wanrep.sql;

import org.wanrep.lock.TableSet;
import org.wanrep.wire.PgError;

import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Classifies the statements one client request executes into a {@link UnitAnalysis}. Statements it
 * cannot place lock every table: too many locks cost concurrency, too few cost correctness.
 */
public class UnitClassifier {
    private static final int CACHE_LIMIT = 20_000;
    /** Longer texts are analysed each time, never kept as cache keys (20,000 large texts would fill the heap). */
    protected static final int MAX_CACHED_CHARS = 16 << 10;
    /** Analyses by SQL text: clients repeat the same texts, so a hit skips all parsing. */
    private final java.util.concurrent.ConcurrentHashMap<String, UnitAnalysis> cache = new java.util.concurrent.ConcurrentHashMap<>();

    /** The same analyses by exact text, looked up before normalizing (the hit that costs nothing). */
    private final java.util.concurrent.ConcurrentHashMap<String, UnitAnalysis> byText = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Bumped by {@link #catalogChanged} before the caches are cleared: an analysis begun under an older
     * generation (it may have read the old catalog) is used but never cached.
     */
    protected volatile long generation;

    /** DDL committed, or the replica replaced by a state transfer: cached analyses and catalog knowledge may be stale. */
    public void catalogChanged() {
        generation++;
        cache.clear();
        byText.clear();
    }

    /**
     * Set by an analysis whose result depends on the request's constants (row locks from key
     * literals, or their refusal): its shape must not be cached. Per thread: analyses run on
     * client sessions' threads.
     */
    protected static final ThreadLocal<Boolean> LITERALS_MATTER = ThreadLocal.withInitial(() -> false);

    /**
     * Whether a statement that writes {@code tables} may advance a sequence (not transactional, so its values
     * must be taken under a cluster lock). Without a catalog: whenever it writes anything.
     */
    public boolean advancesSequence(TableSet tables) {
        return tables.all() || !tables.writes().isEmpty();
    }

    /**
     * Whether these statements, which the analysis showed touch {@code tables}, may run code the classifier does not
     * read: a function other than a built-in, a trigger, a rule, a view's definition. Without a catalog: always.
     */
    public boolean mayRunUnreadCode(List<String> texts, TableSet tables) {
        return true;
    }

    /** Combines the statements executed by one request. */
    public UnitAnalysis analyze(List<String> statements) {
        if (statements.size() == 1) return analyzeText(statements.get(0));
        UnitAnalysis acc = null;
        for (String sql : statements) {
            UnitAnalysis a = analyzeText(sql);
            if (a.route() == Route.REFUSED) return a;
            if (acc != null && (isTxnControl(a) || isTxnControl(acc))) return mixedRefused();
            acc = acc == null ? a : combine(acc, a);
        }
        return acc == null ? UnitAnalysis.local() : acc;
    }

    private static boolean isTxnControl(UnitAnalysis a) {
        return a.route() == Route.BEGIN || a.route() == Route.COMMIT || a.route() == Route.ROLLBACK;
    }

    /**
     * One query string (possibly several statements), cached by its shape: texts that differ only in
     * their constants (as clients that inline values send them) lock the same tables, and everything
     * the analysis reads outside literals is the same for them.
     */
    UnitAnalysis analyzeText(String sql) {
        UnitAnalysis a = byText.get(sql);   // a prepared statement's text: the same string every time
        if (a != null) return a;
        long g = generation;
        String shape = SqlText.normalize(sql);
        a = cache.get(shape);
        if (a == null) a = fromTemplate(sql, shape);
        if (a == null) {
            LITERALS_MATTER.set(false);
            a = analyzeUncached(List.of(sql));
            // row locks follow the constants the shape hides: such a shape is analysed every time
            if (!LITERALS_MATTER.get() && shape.length() <= MAX_CACHED_CHARS && generation == g) {
                if (cache.size() >= CACHE_LIMIT) cache.clear();
                cache.put(shape, a);
            } else if (LITERALS_MATTER.get()) learnTemplate(sql, shape, a, g);
        }
        if (sql.length() <= MAX_CACHED_CHARS && shape.equals(sql) && generation == g) {   // no constants in it (parameters instead): it will come again as is
            if (byText.size() >= CACHE_LIMIT) byText.clear();
            byText.put(sql, a);
        }
        return a;
    }

    /**
     * The analysis of a text whose shape is known to be one statement with row keys in its literals, made from this
     * text's literals without splitting or reading it again; null if there is none (then it is analysed in full).
     */
    protected UnitAnalysis fromTemplate(String sql, String shape) { return null; }

    /**
     * Told of a text analysed in full whose analysis depended on its literals, under catalog generation {@code g}: a
     * subclass may remember its shape for {@link #fromTemplate}, if the shape's template gives this text exactly
     * {@code a}.
     */
    protected void learnTemplate(String sql, String shape, UnitAnalysis a, long g) { }

    private UnitAnalysis analyzeUncached(List<String> statements) {
        List<UnitAnalysis> each = new java.util.ArrayList<>();
        int txnControl = 0;
        for (String sql : statements) {
            // a quote or comment that does not end: PostgreSQL refuses the text, but what it is cannot be told here
            if (SqlLexer.unterminated(sql)) return update(false, false);
            for (String stmt : splitStatements(sql)) {
                UnitAnalysis a = analyzeStatement(stmt);
                if (a.route() == Route.BEGIN || a.route() == Route.COMMIT || a.route() == Route.ROLLBACK) txnControl++;
                each.add(a);
            }
        }
        if (each.isEmpty()) return UnitAnalysis.local();
        UnitAnalysis acc = combine(each);
        if (txnControl > 0 && (txnControl > 1 || acc.route() == Route.UPDATE || acc.route() == Route.LOCAL)) return mixedRefused();
        return acc;
    }

    private static UnitAnalysis mixedRefused() {
        return UnitAnalysis.refused(PgError.error("0A000",
                "wanrep: transaction control (BEGIN/COMMIT/ROLLBACK) mixed with other statements in one request is not supported")
                .withHint("Send BEGIN, the statements and COMMIT as separate queries."));
    }

    static UnitAnalysis combine(UnitAnalysis a, UnitAnalysis b) { return combine(List.of(a, b)); }

    /**
     * The statements' analyses as one request's, in order: the first refusal, else an update if any statement updates,
     * else the first route other than LOCAL; the flags of any; the tables united at once (row-level only where every
     * statement showed its rows).
     */
    static UnitAnalysis combine(List<UnitAnalysis> each) {
        if (each.size() == 1) return each.get(0);
        Route r = Route.LOCAL;
        boolean random = false, time = false, catalog = false;
        List<TableSet> tables = new java.util.ArrayList<>(each.size());
        for (UnitAnalysis a : each) {
            if (a.route() == Route.REFUSED) return a;
            if (r != Route.UPDATE && (a.route() == Route.UPDATE || r == Route.LOCAL)) r = a.route();
            random |= a.random();
            time |= a.timeFunctions();
            catalog |= a.catalogChange();
            tables.add(a.tables());
        }
        return new UnitAnalysis(r, TableSet.union(tables), random, time, catalog, null);
    }

    private static java.util.Set<String> union(java.util.Set<String> x, java.util.Set<String> y) {
        java.util.Set<String> u = new java.util.HashSet<>(x);
        u.addAll(y);
        return u;
    }

    /**
     * Two-phase commit is the proxy's own (certified blocks prepare their transactions): a client's PREPARE TRANSACTION
     * would run at its site only, and its COMMIT or ROLLBACK PREPARED could end a certified block's prepared
     * transaction against the group's decision.
     */
    private static UnitAnalysis twoPhaseRefused() {
        return UnitAnalysis.refused(PgError.error("0A000", "wanrep: two-phase commit (PREPARE TRANSACTION, COMMIT/ROLLBACK PREPARED) is not supported"));
    }

    /** One statement, by its leading keyword (the SQL analysis refines UPDATE's tables). */
    protected UnitAnalysis analyzeStatement(String stmt) {
        String s = stripComments(stmt).trim().toLowerCase(Locale.ROOT);
        if (s.isEmpty()) return UnitAnalysis.local();
        String first = firstWord(s);
        boolean random = s.contains("random(");
        boolean time = s.contains("now(") || s.contains("current_timestamp") || s.contains("current_date") || s.contains("localtimestamp");
        return switch (first) {
            case "begin", "start" -> route(Route.BEGIN);
            case "commit", "end" -> s.contains("and chain") ? chainRefused() : s.matches("commit\\s+prepared\\b.*") ? twoPhaseRefused() : route(Route.COMMIT);
            case "abort" -> route(Route.ROLLBACK);
            case "rollback" -> s.matches("rollback\\s+prepared\\b.*") ? twoPhaseRefused() : s.startsWith("rollback to") || s.matches("rollback\\s+(work\\s+|transaction\\s+)?to\\b.*")
                    ? UnitAnalysis.local() : s.contains("and chain") ? chainRefused() : route(Route.ROLLBACK);
            case "savepoint", "release", "show", "set", "reset", "discard", "deallocate", "listen", "unlisten", "load",
                    "vacuum", "analyze", "analyse", "checkpoint", "fetch", "move", "close", "declare" ->
                    first.equals("declare") && s.contains(" for update") ? update(random, time) : UnitAnalysis.local();
            case "execute" -> UnitAnalysis.refused(PgError.error("0A000",
                    "wanrep: EXECUTE of an SQL-level prepared statement cannot be replicated").withHint("Use protocol-level prepared statements (as drivers do)."));
            case "prepare" -> s.startsWith("prepare transaction") ? twoPhaseRefused() : UnitAnalysis.local();
            case "select", "values", "table", "with", "explain" -> readOnlyUnlessWrites(s, random, time);
            default -> DDL.contains(first) ? ddl(random, time) : new UnitAnalysis(Route.UPDATE, TableSet.allTables(), random, time, false, null);
        };
    }

    private static final java.util.regex.Pattern INTO = java.util.regex.Pattern.compile("\\binto\\b");
    private static final java.util.regex.Pattern DML = java.util.regex.Pattern.compile("\\b(insert|update|delete|merge)\\b");

    /** The leading keyword (up to white space, a parenthesis or a semicolon). */
    private static String firstWord(String s) {
        int i = 0, n = s.length();
        while (i < n) {
            char c = s.charAt(i);
            if (Character.isWhitespace(c) || c == '(' || c == ';') break;
            i++;
        }
        return s.substring(0, i);
    }

    private static UnitAnalysis readOnlyUnlessWrites(String s, boolean random, boolean time) {
        boolean writes = s.contains("nextval(") || s.contains("setval(") || s.contains(" for update") || s.contains(" for share")
                || s.contains(" for no key update") || s.contains(" for key share") || (s.contains("into") && INTO.matcher(s).find())
                || (mayNameDml(s) && DML.matcher(s).find()) || (s.startsWith("explain") && s.contains("analy"));
        return writes ? update(random, time) : UnitAnalysis.local();
    }

    /** A fast test before the regular expression (a text of many MB takes seconds in it, milliseconds here). */
    private static boolean mayNameDml(String s) {
        return s.contains("insert") || s.contains("update") || s.contains("delete") || s.contains("merge");
    }

    /** Statements after which the catalog (tables, views, keys, triggers, defaults) must be read again. */
    private static final Set<String> DDL = Set.of("create", "alter", "drop", "comment", "grant", "revoke", "reindex", "refresh",
            "security", "import", "truncate");

    /** Whether any statement of {@code sql} changes the catalog. */
    public static boolean changesCatalog(String sql) {
        for (String st : splitStatements(sql)) {
            String s = stripComments(st).trim().toLowerCase(Locale.ROOT);
            if (!s.isEmpty() && DDL.contains(firstWord(s))) return true;
        }
        return false;
    }

    private static UnitAnalysis ddl(boolean random, boolean time) {
        return new UnitAnalysis(Route.UPDATE, TableSet.allTables(), random, time, true, null);
    }

    private static UnitAnalysis update(boolean random, boolean time) {
        return new UnitAnalysis(Route.UPDATE, TableSet.allTables(), random, time, false, null);
    }

    private static UnitAnalysis route(Route r) { return new UnitAnalysis(r, TableSet.of(java.util.Set.of(), java.util.Set.of()), false, false, false, null); }

    private static UnitAnalysis chainRefused() {
        return UnitAnalysis.refused(PgError.error("0A000", "wanrep: COMMIT/ROLLBACK AND CHAIN is not supported"));
    }

    /**
     * Splits on semicolons outside literals, quoted identifiers, dollar quotes and comments
     * ({@link SqlLexer}); blank pieces are dropped. A quote or comment that does not end takes the
     * rest of the text into the last statement (PostgreSQL refuses the whole text; callers that
     * classify check {@link SqlLexer#unterminated(String)} and lock every table).
     */
    public static List<String> splitStatements(String sql) {
        List<String> out = new java.util.ArrayList<>();
        int from = 0;
        for (SqlLexer.Token t : SqlLexer.tokens(sql)) {
            if (t.kind() != SqlLexer.Kind.SEMICOLON) continue;
            addStatement(sql, from, t.start(), out);
            from = t.end();
        }
        addStatement(sql, from, sql.length(), out);
        return out;
    }

    private static void addStatement(String sql, int from, int to, List<String> out) {
        for (int i = from; i < to; i++) {
            if (!Character.isWhitespace(sql.charAt(i))) { out.add(sql.substring(from, to)); return; }
        }
    }

    /** The text with every comment replaced by one blank (literals untouched). */
    public static String stripComments(String s) {
        if (s.indexOf("/*") < 0 && s.indexOf("--") < 0) return s;
        StringBuilder b = new StringBuilder(s.length());
        for (SqlLexer.Token t : SqlLexer.tokens(s)) {
            if (t.kind() == SqlLexer.Kind.COMMENT) b.append(' ');
            else b.append(s, t.start(), t.end());
        }
        return b.toString();
    }
}
