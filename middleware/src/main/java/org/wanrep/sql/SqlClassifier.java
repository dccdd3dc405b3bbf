package org.wanrep.sql;

import net.sf.jsqlparser.parser.CCJSqlParserUtil;
import net.sf.jsqlparser.schema.Table;
import net.sf.jsqlparser.statement.Statement;
import net.sf.jsqlparser.statement.delete.Delete;
import net.sf.jsqlparser.statement.insert.Insert;
import net.sf.jsqlparser.statement.merge.Merge;
import net.sf.jsqlparser.statement.select.PlainSelect;
import net.sf.jsqlparser.statement.select.Select;
import net.sf.jsqlparser.statement.select.Values;
import net.sf.jsqlparser.statement.truncate.Truncate;
import net.sf.jsqlparser.statement.update.Update;
import net.sf.jsqlparser.util.TablesNamesFinder;
import org.wanrep.lock.TableSet;
import org.wanrep.wire.PgError;

import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Which tables a statement reads and writes, from JSqlParser and the catalog: views stand for their
 * base tables, a write to a table written by cascading foreign keys writes those too, a foreign key
 * check reads the referenced table, column defaults advance their sequences, and a table with user
 * triggers, a call of a function whose table set is neither configured nor derivable from its body
 * ({@link FunctionSets}), or anything the parser cannot follow locks every table. Functions whose result differs between sites are refused in updates.
 */
public final class SqlClassifier extends UnitClassifier {
    /** Functions that give each site a different value: refused under symmetric execution. */
    static final Set<String> NON_DETERMINISTIC = java.util.stream.Stream.concat(java.util.stream.Stream.of("clock_timestamp", "statement_timestamp", "timeofday", "gen_random_uuid",
            "uuid_generate_v1", "uuid_generate_v1mc", "uuid_generate_v4", "pg_backend_pid", "txid_current", "txid_current_if_assigned",
            "pg_current_xact_id", "pg_current_xact_id_if_assigned", "inet_server_addr", "inet_server_port", "inet_client_addr",
            "inet_client_port", "pg_postmaster_start_time", "currval", "lastval", "random_normal", "pg_current_wal_lsn"),
            SiteLocal.SERVER_FUNCTIONS.stream()).collect(java.util.stream.Collectors.toUnmodifiableSet());   // and a site's own files and sizes
    /** Built-in functions that change the database or its sequences: every table, to be safe. */
    static final Set<String> WRITING_BUILTINS = Set.of("nextval", "setval", "pg_advisory_lock", "pg_advisory_xact_lock", "lo_import",
            "lo_unlink", "lo_create", "lo_from_bytea", "lo_put", "pg_logical_emit_message");

    /** Longer statements are not handed to JSqlParser: they lock every table (read-only ones stay local). */
    public static final int MAX_PARSED_CHARS = 1 << 20;

    private final Supplier<Catalog> loader;
    private final Map<String, TableSet> functions;
    private volatile Catalog catalog;
    private final Map<String, UnitAnalysis> byShape = new ConcurrentHashMap<>();
    /** Shapes whose row keys follow their literals: parsed once, keys read from each text's literals. */
    private final Map<String, RowTemplate> templates = new ConcurrentHashMap<>();
    /**
     * The same templates by the shape of a whole request text that is one such statement (pgbench's and ORMs'
     * texts end in a semicolon, so the statement's own shape differs): the analysis comes from the text's
     * literals, with no split, keyword look or second lexing.
     */
    private final Map<String, RowTemplate> textTemplates = new ConcurrentHashMap<>();

    /**
     * JSqlParser's own {@code parse(String)} starts a thread per statement for its timeout; a pool
     * of daemon threads gives the same timeout without that cost on every update.
     */
    private static final java.util.concurrent.ExecutorService PARSER = java.util.concurrent.Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "wanrep-sql-parse");
        t.setDaemon(true);
        return t;
    });

    /** Statements parsed so far (tests: a shape seen before parses nothing). */
    static final java.util.concurrent.atomic.AtomicLong PARSES = new java.util.concurrent.atomic.AtomicLong();

    static Statement parse(String sql) throws net.sf.jsqlparser.JSQLParserException {
        PARSES.incrementAndGet();
        return CCJSqlParserUtil.parse(sql, PARSER, null);
    }

    /**
     * The analysis of one statement shape whose row keys are read from each text's literals: the
     * shape parsed once with every literal a JDBC parameter ({@link RowKeys#of(Statement, String, Catalog, List)}).
     * Everything else the analysis holds does not depend on the literals (the shape is cached for them).
     */
    private record RowTemplate(Statement shape, String target, Catalog cat, int literals, UnitAnalysis withoutRows) {
        UnitAnalysis apply(List<String> lits) {
            Map<String, org.wanrep.lock.LockMode> keys = RowKeys.of(shape, target, cat, lits);
            if (keys == null) return withoutRows;
            TableSet t = withoutRows.tables();
            return new UnitAnalysis(withoutRows.route(), new TableSet(t.reads(), t.writes(), false, Map.of(target, keys)),
                    withoutRows.random(), withoutRows.timeFunctions(), withoutRows.catalogChange(), null);
        }
    }

    private final boolean writeSets;

    /** {@code functions}: configured table sets per function name (bare or schema-qualified). */
    public SqlClassifier(Supplier<Catalog> loader, Map<String, TableSet> functions) { this(loader, functions, false); }

    /**
     * With {@code writeSets} (primary-copy, local-copy) DML runs at one site and ships its write set,
     * so functions that differ between sites are allowed there; DDL still runs everywhere and is
     * still refused them.
     */
    public SqlClassifier(Supplier<Catalog> loader, Map<String, TableSet> functions, boolean writeSets) {
        this.loader = loader;
        this.functions = Map.copyOf(functions);
        this.writeSets = writeSets;
    }

    private volatile FunctionSets functionSets;

    /** Derived function sets of this catalog snapshot (every site derives the same from the same catalog). */
    private FunctionSets functionSets(Catalog cat) {
        FunctionSets f = functionSets;
        if (f == null || f.catalog() != cat) functionSets = f = new FunctionSets(cat, functions);
        return f;
    }

    private Catalog catalog() {
        Catalog c = catalog;
        if (c == null) {
            synchronized (this) {
                c = catalog;
                if (c == null) {
                    long g = generation;
                    c = loader.get();
                    if (generation == g) catalog = c;   // a change during the read: this one may be stale, read it again next time
                }
            }
        }
        return c;
    }

    @Override public boolean advancesSequence(TableSet tables) {
        return tables.all() || catalog().advancesSequence(tables.writes());
    }

    @Override public boolean mayRunUnreadCode(List<String> texts, TableSet tables) {
        if (tables.all()) return true;
        Catalog cat = catalog();
        for (String w : tables.writes()) if (cat.triggered.contains(w) || cat.wholeOnly.contains(w)) return true;   // triggers, rules
        for (String t : texts) {
            if (callsUnread(TimeRewriting.withoutReplicatedClock(t), cat)) return true;
            if (!cat.viewBases.isEmpty()) {   // a view's definition may call anything: any text naming one counts
                String lower = t.toLowerCase(Locale.ROOT);
                for (String v : cat.viewBases.keySet()) if (lower.contains(v.substring(v.indexOf('.') + 1))) return true;
            }
        }
        return false;
    }

    /**
     * Verdicts of {@link #callsUnread} by the text's shape: the functions a text calls do not depend on its
     * literals, and every update of a certifying block asks (texts that differ only in their constants).
     */
    private final Map<String, Boolean> callsByShape = new ConcurrentHashMap<>();

    /** Whether {@code sql} calls a function other than a read-only built-in of {@code cat}. */
    private boolean callsUnread(String sql, Catalog cat) {
        long g = generation;
        String shape = SqlText.normalize(sql);
        Boolean known = callsByShape.get(shape);
        if (known != null) return known;
        boolean unread = false;
        for (String f : SqlText.functionCalls(sql)) {
            String bare = f.substring(f.lastIndexOf('.') + 1);
            if (WRITING_BUILTINS.contains(bare) || !(f.startsWith("pg_catalog.") || !f.contains(".") && cat.builtinFunctions.contains(bare))) {
                unread = true;
                break;
            }
        }
        if (shape.length() <= MAX_CACHED_CHARS && generation == g && catalog == cat) {   // not from a catalog replaced meanwhile
            if (callsByShape.size() > 20_000) callsByShape.clear();
            callsByShape.put(shape, unread);
        }
        return unread;
    }

    @Override public void catalogChanged() {
        catalog = null;            // first: an analysis from here on reads the catalog again
        super.catalogChanged();    // then the generation: what began before (and may have read the old one) is not kept
        byShape.clear();
        templates.clear();
        textTemplates.clear();
        callsByShape.clear();
        bodyProblems.clear();
    }

    @Override protected UnitAnalysis analyzeStatement(String stmt) {
        if (!writeSets && FunctionBodies.definesCode(stmt)) {
            // every site runs the body: what cannot give the same result everywhere is refused when it is defined
            List<String> problems = FunctionBodies.problems(stmt);
            if (!problems.isEmpty())
                return UnitAnalysis.refused(PgError.error("0A000", "wanrep: " + FunctionBodies.name(stmt)
                                + " would give different results at different sites under symmetric execution: " + String.join("; ", problems))
                        .withHint("Add ORDER BY on a unique key, avoid per-server values, or use execution: primary-copy or local-copy "
                                + "(write-set replication runs it at one site)."));
        }
        long g = generation;
        UnitAnalysis kw = super.analyzeStatement(stmt);
        if (kw.route() != Route.UPDATE && kw.route() != Route.LOCAL) return kw;
        List<String> lits = new java.util.ArrayList<>();
        String shape = SqlText.normalize(stmt, lits);
        UnitAnalysis cached = byShape.get(shape);
        if (cached != null) return cached;
        RowTemplate tpl = templates.get(shape);
        // keys from this text's literals, nothing parsed; a text that names a setting is checked whole (its verdict is the literal's)
        if (tpl != null && tpl.literals() == lits.size() && !SiteLocal.readsSetting(stmt)) {
            LITERALS_MATTER.set(true);
            return tpl.apply(lits);
        }
        boolean before = LITERALS_MATTER.get();
        LITERALS_MATTER.set(false);
        RowTemplate[] template = new RowTemplate[1];
        UnitAnalysis a = refine(stmt, kw, template);
        if (shape.length() > MAX_CACHED_CHARS) {
            // a long text is never a cache key (it would pin its size in memory)
        } else if (generation != g) {
            // the catalog changed while this ran: not kept
        } else if (!LITERALS_MATTER.get()) {
            if (byShape.size() > 20_000) byShape.clear();
            byShape.put(shape, a);
        } else if (template[0] != null && !SiteLocal.readsSetting(stmt)) {   // (its verdict is the literal's)
            // row locks depend on the literals the shape hides: the shape parsed with parameters, kept
            // only if it gives this text the keys the text itself gave
            RowTemplate t = shapeTemplate(shape, lits.size(), template[0]);
            if (t != null && t.apply(lits).equals(a)) {
                if (templates.size() > 20_000) templates.clear();
                templates.put(shape, t);
            }
        }
        LITERALS_MATTER.set(before || LITERALS_MATTER.get());
        return a;
    }

    @Override protected UnitAnalysis fromTemplate(String sql, String shape) {
        RowTemplate t = textTemplates.get(shape);
        if (t == null) return null;
        List<String> lits = new java.util.ArrayList<>();
        SqlText.normalize(sql, lits);   // the memo of the lexing that gave the shape
        // as for a statement's template: the same number of literals, and a text naming a setting is checked whole
        if (t.literals() != lits.size() || SiteLocal.readsSetting(sql)) return null;
        LITERALS_MATTER.set(true);
        return t.apply(lits);
    }

    @Override protected void learnTemplate(String sql, String shape, UnitAnalysis a, long g) {
        if (shape.length() > MAX_CACHED_CHARS || shape.equals(sql) || SiteLocal.readsSetting(sql)) return;
        List<String> statements = splitStatements(sql);
        if (statements.size() != 1) return;
        RowTemplate t = templates.get(SqlText.normalize(statements.get(0)));
        if (t == null) return;
        List<String> lits = new java.util.ArrayList<>();
        SqlText.normalize(sql, lits);
        // kept only if it gives this text what the full analysis gave, from a catalog not replaced meanwhile
        if (t.literals() != lits.size() || !t.apply(lits).equals(a) || generation != g) return;
        if (textTemplates.size() > 20_000) textTemplates.clear();
        textTemplates.put(shape, t);
        if (generation != g) textTemplates.remove(shape, t);   // the catalog changed meanwhile, its clearing perhaps before the put
    }

    /** Problems of user functions' bodies, by name as called, for the current catalog. */
    private final Map<String, List<String>> bodyProblems = new ConcurrentHashMap<>();

    private List<String> bodyProblems(Catalog cat, String called) {
        return bodyProblems.computeIfAbsent(called, f -> {
            String q = functionSets(cat).qualify(f);
            if (q == null) return List.of();
            List<String> out = new java.util.ArrayList<>();
            for (Catalog.Function fn : cat.functionBodies.getOrDefault(q, List.of()))
                out.addAll(FunctionBodies.problemsOfBody(fn.language(), fn.body()));
            return List.copyOf(out);
        });
    }

    /** The template with the shape parsed (each {@code ?} a JDBC parameter), or null if the shape does not read that way. */
    private static RowTemplate shapeTemplate(String shape, int literals, RowTemplate t) {
        if (shape.chars().filter(c -> c == '?').count() != literals) return null;   // a ? of the text's own (an operator)
        try {
            return new RowTemplate(parse(shape), t.target(), t.cat(), literals, t.withoutRows());
        } catch (Exception | StackOverflowError e) {
            return null;
        }
    }

    private UnitAnalysis refine(String stmt, UnitAnalysis kw, RowTemplate[] template) {
        Catalog cat = catalog();
        Set<String> calls = SqlText.functionCalls(stmt);
        boolean update = kw.route() == Route.UPDATE;
        TableSet configured = null;
        boolean unknownFunction = false;
        for (String f : calls) {
            String bare = f.substring(f.lastIndexOf('.') + 1);
            if (update && NON_DETERMINISTIC.contains(bare) && (!writeSets || kw.catalogChange()) && !definesOnly(stmt))
                return refusedNonDeterministic(bare + "()");
            if (WRITING_BUILTINS.contains(bare)) { unknownFunction = true; continue; }
            if (f.startsWith("pg_catalog.") || (!f.contains(".") && cat.builtinFunctions.contains(bare))) continue;
            TableSet t = functionSets(cat).of(f);   // configured, else derived from the body
            if (!writeSets && (t == null || !t.writes().isEmpty() || t.all())) {
                // every site runs a writing call: a body that cannot give the same result everywhere (e.g. one
                // created directly in a replica, never seen by the proxy) is refused here, not run
                List<String> problems = bodyProblems(cat, f);
                if (!problems.isEmpty())
                    return UnitAnalysis.refused(PgError.error("0A000", "wanrep: function " + f
                                    + " would give different results at different sites under symmetric execution: " + String.join("; ", problems))
                            .withHint("Define it through wanrep (which makes clocks and random values replicable), add ORDER BY on a unique key, "
                                    + "or use execution: primary-copy or local-copy."));
            }
            if (t == null) unknownFunction = true;
            else configured = configured == null ? t : union(configured, t);
        }
        boolean symmetric = update && (!writeSets || kw.catalogChange()) && !definesOnly(stmt);
        if (symmetric) {
            // which setting current_setting() reads is a literal: texts of one shape may differ in the verdict
            if (SiteLocal.readsSetting(stmt)) LITERALS_MATTER.set(true);
            String local = SiteLocal.reason(stmt);
            if (local == null) local = SiteLocal.unorderedLimit(stmt);
            if (local != null) return refusedNonDeterministic(local);
        }
        if (unknownFunction) return new UnitAnalysis(Route.UPDATE, TableSet.allTables(), kw.random(), kw.timeFunctions(), true, null);
        if (!update && configured == null && !isQuery(stmt)) return kw;   // SET, SHOW, VACUUM...: nothing to lock
        Set<String> reads = new HashSet<>(), writes = new HashSet<>();
        boolean forUpdate = false;
        // JSqlParser needs many times a text's size (a 50 MB SELECT exhausted the heap): longer statements are not
        // parsed, and locking every table is always safe
        if (stmt.length() > MAX_PARSED_CHARS) return notFollowed(kw, configured);
        Statement parsed;
        try {
            parsed = parse(stmt);
        } catch (Exception | StackOverflowError | OutOfMemoryError e) {
            return notFollowed(kw, configured);
        }
        Set<String> named;
        try {
            named = new TablesNamesFinder().getTables(parsed);
        } catch (RuntimeException e) {
            return notFollowed(kw, configured);
        }
        for (String n : named) {
            // a catalog or statistics view holds this site's own values (OIDs, counters, settings)
            if (symmetric && SiteLocal.systemRelation(n, cat)) return refusedNonDeterministic("reading " + n);
            reads.add(cat.resolve(n));
        }
        String insertTarget = null;
        switch (parsed) {
            case Insert i -> {
                writes.add(insertTarget = cat.resolve(name(i.getTable())));
                // rows from a query take their sequence values in the order the query returns them
                // (from tables: generate_series, VALUES and other functions give their rows in one order everywhere)
                String target = insertTarget;
                boolean fromTables = named.stream().anyMatch(n -> !cat.resolve(n).equals(target));
                if (symmetric && fromTables && i.getSelect() != null && !(i.getSelect() instanceof Values)
                        && cat.defaultSequences.containsKey(insertTarget) && !SiteLocal.ordered(stmt))
                    return refusedNonDeterministic("INSERT ... SELECT without ORDER BY into " + insertTarget
                            + ", whose defaults take sequence values (which row gets which value depends on each replica's physical order),");
            }
            case Update u -> writes.add(cat.resolve(name(u.getTable())));
            case Delete d -> {
                if (d.getTable() != null) writes.add(cat.resolve(name(d.getTable())));
                if (d.getTables() != null) for (Table t : d.getTables()) writes.add(cat.resolve(name(t)));
            }
            case Merge m -> writes.add(cat.resolve(name(m.getTable())));
            case Truncate t -> {
                if (t.getTables() != null) for (Table x : t.getTables()) writes.add(cat.resolve(name(x)));
                if (t.getTable() != null) writes.add(cat.resolve(name(t.getTable())));
            }
            case Select s -> {
                PlainSelect ps = s instanceof PlainSelect p ? p : null;
                forUpdate = ps != null && ps.getForMode() != null || stmt.toLowerCase(Locale.ROOT).matches("(?s).*\\bfor\\s+(update|share|no\\s+key\\s+update|key\\s+share)\\b.*");
                if (forUpdate) writes.addAll(reads);
                if (ps != null && ps.getIntoTables() != null) return kw.route() == Route.UPDATE ? kw : everything(kw);
            }
            default -> { return update ? kw : everything(kw); }
        }
        if (update && writes.isEmpty() && !forUpdate && configured == null) return kw;   // not followed: every table
        // views stand for their base tables
        reads = expandViews(cat, reads);
        writes = expandViews(cat, writes);
        // cascading foreign keys write the children (only changes to existing rows cascade); checks read the parents
        boolean changesExisting = insertTarget == null || stmt.toLowerCase(Locale.ROOT).matches("(?s).*\\bon\\s+conflict\\b.*\\bdo\\s+update\\b.*");
        ArrayDeque<String> todo = new ArrayDeque<>(writes);
        while (!todo.isEmpty()) {
            String w = todo.poll();
            for (Catalog.ForeignKey fk : cat.foreignKeys) {
                if (fk.parent().equals(w) && changesExisting) {
                    if (fk.cascades() && writes.add(fk.child())) todo.add(fk.child());
                    else reads.add(fk.child());
                }
                if (fk.child().equals(w)) reads.add(fk.parent());
            }
        }
        Set<String> sequences = new HashSet<>();
        for (String w : writes) {
            if (cat.triggered.contains(w)) return new UnitAnalysis(Route.UPDATE, TableSet.allTables(), kw.random(), kw.timeFunctions(), true, null);
            Set<String> seqs = cat.defaultSequences.get(w);
            if (seqs != null) sequences.addAll(seqs);
        }
        writes.addAll(sequences);
        if (insertTarget != null && update && !writeSets) {
            for (String expr : cat.defaultExprs.getOrDefault(insertTarget, java.util.List.of())) {
                String e = expr.toLowerCase(Locale.ROOT);
                for (String f : SqlText.functionCalls(e)) {
                    String bare = f.substring(f.lastIndexOf('.') + 1);
                    if (NON_DETERMINISTIC.contains(bare)) return refusedNonDeterministic(bare + "() in a column default of " + insertTarget);
                }
                if ((e.contains("now()") || e.contains("current_timestamp") || e.contains("current_date") || e.contains("localtimestamp"))
                        && !e.contains("wanrep.ts"))
                    return UnitAnalysis.refused(PgError.error("0A000", "wanrep: a column default of " + insertTarget
                            + " reads the clock (" + expr + "), which differs between sites under symmetric execution")
                            .withHint("Set the default again through wanrep (ALTER TABLE ... ALTER COLUMN ... SET DEFAULT now()), which makes it read the replicated "
                                    + "transaction time, or use execution: primary-copy or local-copy (write-set replication)."));
            }
        }
        if (configured != null) {
            if (configured.all()) return new UnitAnalysis(Route.UPDATE, TableSet.allTables(), kw.random(), kw.timeFunctions(), true, null);
            reads.addAll(configured.reads());
            writes.addAll(configured.writes());
        }
        boolean writesSomething = update || !writes.isEmpty();
        reads.removeAll(writes);
        TableSet tables = TableSet.of(reads, writes);
        // Row locks for the one table the statement names, when its text shows the rows (RowKeys);
        // the tables it reaches otherwise (foreign keys, cascades, sequences) stay locked whole.
        String target = insertTarget;
        if (parsed instanceof Update u) target = cat.resolve(name(u.getTable()));
        if (parsed instanceof Delete d && d.getTable() != null) target = cat.resolve(name(d.getTable()));
        if (parsed instanceof PlainSelect ps && ps.getFromItem() instanceof Table t) target = cat.resolve(name(t));
        Set<String> resolvedNames = new HashSet<>();
        for (String n : named) resolvedNames.add(cat.resolve(n));
        // calls may reach other rows; the replicated clock that TimeRewriting put in (pgbench's history stamp) reaches none
        if (target != null && configured == null && SqlText.functionCalls(TimeRewriting.withoutReplicatedClock(stmt)).isEmpty()
                && resolvedNames.equals(Set.of(target)) && !hasSubquery(stmt, parsed)
                && !cat.viewBases.containsKey(target) && (reads.contains(target) || writes.contains(target))) {
            LITERALS_MATTER.set(true);
            Map<String, org.wanrep.lock.LockMode> keys = RowKeys.of(parsed, target, cat);
            TableSet whole = tables;
            if (keys != null) tables = new TableSet(reads, writes, false, Map.of(target, keys));
            template[0] = new RowTemplate(null, target, cat, 0, new UnitAnalysis(writesSomething ? Route.UPDATE : Route.LOCAL, whole,
                    kw.random(), kw.timeFunctions(), kw.catalogChange() && writesSomething && (isDdlish(stmt) || parsed instanceof Truncate), null));
        }
        return new UnitAnalysis(writesSomething ? Route.UPDATE : Route.LOCAL, tables, kw.random(), kw.timeFunctions(),
                // TRUNCATE: logical decoding carries no write set for it, so it runs at every site (symmetric), as DDL does,
                // also inside a block (whose write set would otherwise be refused after the block committed here)
                kw.catalogChange() && writesSomething && (isDdlish(stmt) || parsed instanceof Truncate), null);
    }

    /**
     * The parser could not follow the statement: an update locks every table; a query runs locally
     * unless it calls a function configured as writing, which makes it an update of every table
     * (when in doubt, lock more; a write must never run at one site only).
     */
    private static UnitAnalysis notFollowed(UnitAnalysis kw, TableSet configured) {
        if (kw.route() == Route.UPDATE) return kw;
        if (configured != null && (configured.all() || !configured.writes().isEmpty()))
            return new UnitAnalysis(Route.UPDATE, TableSet.allTables(), kw.random(), kw.timeFunctions(), false, null);
        return new UnitAnalysis(Route.LOCAL, TableSet.allTables(), kw.random(), kw.timeFunctions(), false, null);
    }

    private static final java.util.regex.Pattern CREATE_DEFINITION = java.util.regex.Pattern.compile(
            "(?is)\\s*create\\s+(or\\s+replace\\s+)?((unlogged|temp|temporary)\\s+)?(table|view|function|procedure|trigger|index|sequence)\\b.*");
    private static final java.util.regex.Pattern EVALUATES = java.util.regex.Pattern.compile(
            "(?is).*\\b(table|sequence|index)\\b.*\\bas\\s*(\\(|select\\b|with\\b|values\\b|table\\b|execute\\b).*");

    /**
     * DDL that only stores a definition (a column default, a view, a function body) evaluates none of
     * its functions now, so a non-deterministic one in it is harmless; CREATE TABLE ... AS, or ALTER
     * TABLE ... ADD COLUMN ... DEFAULT on existing rows, do evaluate and stay refused.
     */
    static boolean definesOnly(String stmt) {
        if (!CREATE_DEFINITION.matcher(stmt).matches()) return false;
        String s = stmt.toLowerCase(Locale.ROOT);
        if (s.matches("(?s)\\s*create\\s+(or\\s+replace\\s+)?(view|function|procedure|trigger)\\b.*")) return true;
        return !EVALUATES.matcher(stmt).matches();
    }

    private static final java.util.regex.Pattern SELECT_WORD = java.util.regex.Pattern.compile("(?i)\\b(select|table|values)\\b");

    /**
     * A subquery (even of the statement's own table: {@code SET v = (SELECT sum(v) FROM t)}) reads
     * rows the statement's key does not name. Counted on the text without literals; a quoted name
     * or a comment that looks like one only keeps the table whole.
     */
    private static boolean hasSubquery(String stmt, Statement parsed) {
        java.util.regex.Matcher m = SELECT_WORD.matcher(SqlText.normalize(stmt));
        int n = 0;
        while (m.find()) n++;
        return n > (parsed instanceof Select || parsed instanceof Insert ? 1 : 0);   // the SELECT itself, INSERT's VALUES
    }

    private static boolean isQuery(String stmt) {
        String s = stmt.stripLeading().toLowerCase(Locale.ROOT);
        return s.startsWith("select") || s.startsWith("with") || s.startsWith("values") || s.startsWith("table") || s.startsWith("(");
    }

    private static boolean isDdlish(String stmt) { return false; }

    private static UnitAnalysis everything(UnitAnalysis kw) {
        return new UnitAnalysis(kw.route(), TableSet.allTables(), kw.random(), kw.timeFunctions(), kw.catalogChange(), null);
    }

    /** Views replaced by their base tables, transitively. */
    static Set<String> expandViews(Catalog cat, Set<String> names) {
        Set<String> out = new HashSet<>();
        ArrayDeque<String> todo = new ArrayDeque<>(names);
        Set<String> seen = new HashSet<>();
        while (!todo.isEmpty()) {
            String n = todo.poll();
            if (!seen.add(n)) continue;
            Set<String> bases = cat.viewBases.get(n);
            if (bases == null) out.add(n);
            else todo.addAll(bases);
        }
        return out;
    }

    private static String name(Table t) { return t.getFullyQualifiedName(); }

    private static TableSet union(TableSet a, TableSet b) {
        if (a.all() || b.all()) return TableSet.allTables();
        Set<String> r = new HashSet<>(a.reads()), w = new HashSet<>(a.writes());
        r.addAll(b.reads());
        w.addAll(b.writes());
        return TableSet.of(r, w);
    }

    static UnitAnalysis refusedNonDeterministic(String what) {
        return UnitAnalysis.refused(PgError.error("0A000", "wanrep: " + what + " cannot be replicated by symmetric execution: each site would compute a different value")
                .withHint("Compute the value in the client, or use execution: primary-copy or local-copy (write-set replication)."));
    }
}
