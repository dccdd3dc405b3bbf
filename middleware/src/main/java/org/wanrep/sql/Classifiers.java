package org.wanrep.sql;

import org.wanrep.backend.BackendTarget;
import org.wanrep.config.Config;
import org.wanrep.lock.TableSet;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** One classifier per database of this site's replica, each with that database's catalog. */
public final class Classifiers {
    private final BackendTarget replica;
    private final Map<String, TableSet> functions;
    private final Map<String, UnitClassifier> byDatabase = new ConcurrentHashMap<>();
    private final boolean writeSets;

    public Classifiers(BackendTarget replica, Map<String, TableSet> functions) { this(replica, functions, false); }

    /** {@code writeSets}: a write-set policy executes DML at one site, so its non-determinism is harmless there. */
    public Classifiers(BackendTarget replica, Map<String, TableSet> functions, boolean writeSets) {
        this.replica = replica;
        this.functions = Map.copyOf(functions);
        this.writeSets = writeSets;
    }

    public UnitClassifier forDatabase(String db) {
        return byDatabase.computeIfAbsent(db, d -> new SqlClassifier(() -> load(d), functions, writeSets));
    }

    /** The replica was replaced (a state transfer): every database's catalog is read again. */
    public void catalogChangedEverywhere() {
        for (UnitClassifier c : byDatabase.values()) c.catalogChanged();
    }

    /** DDL committed somewhere in this database: every session's next analysis reads the catalog again. */
    public void catalogChanged(String db) {
        UnitClassifier c = byDatabase.get(db);
        if (c != null) c.catalogChanged();
    }

    private Catalog load(String db) {
        Properties p = new Properties();
        p.setProperty("user", replica.user());
        if (replica.password() != null && !replica.password().isEmpty()) p.setProperty("password", replica.password());
        try (Connection c = DriverManager.getConnection(replica.jdbcUrl(db), p)) {
            return Catalog.load(c);
        } catch (SQLException e) {
            // without the catalog, analyses are still safe: unknown functions and triggers lock every table
            org.slf4j.LoggerFactory.getLogger(Classifiers.class).warn("cannot read the catalog of {}: {}; locking conservatively", db, e.getMessage());
            return Catalog.empty();
        }
    }

    private static final Pattern FUNCTION_KEY = Pattern.compile("functions\\.(.+)\\.(reads|writes)");

    /**
     * Table sets configured for functions: {@code functions.NAME.reads} / {@code .writes}, comma-separated
     * schema-qualified tables, or {@code *} for every table.
     */
    public static Map<String, TableSet> configuredFunctions(Config c) {
        Map<String, Set<String>> reads = new HashMap<>(), writes = new HashMap<>();
        Set<String> all = new HashSet<>();
        for (Map.Entry<String, String> e : c.explicit().entrySet()) {
            Matcher m = FUNCTION_KEY.matcher(e.getKey());
            if (!m.matches()) continue;
            String fn = m.group(1).toLowerCase(java.util.Locale.ROOT);
            Set<String> tables = new HashSet<>();
            for (String t : Arrays.stream(e.getValue().split(",")).map(String::trim).filter(x -> !x.isEmpty()).toList()) {
                if (t.equals("*")) all.add(fn);
                else tables.add(t.contains(".") ? t.toLowerCase(java.util.Locale.ROOT) : "public." + t.toLowerCase(java.util.Locale.ROOT));
            }
            (m.group(2).equals("reads") ? reads : writes).computeIfAbsent(fn, k -> new HashSet<>()).addAll(tables);
        }
        Map<String, TableSet> out = new HashMap<>();
        Set<String> names = new HashSet<>(reads.keySet());
        names.addAll(writes.keySet());
        for (String fn : names)
            out.put(fn, all.contains(fn) ? TableSet.allTables() : TableSet.of(reads.getOrDefault(fn, Set.of()), writes.getOrDefault(fn, Set.of())));
        return out;
    }
}
