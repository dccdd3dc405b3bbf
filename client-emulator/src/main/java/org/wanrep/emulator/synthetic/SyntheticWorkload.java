package org.wanrep.emulator.synthetic;

import org.wanrep.emulator.workload.SqlTransaction;
import org.wanrep.emulator.workload.Transaction;
import org.wanrep.emulator.workload.Workload;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The study's synthetic database and transactions: N tables {@code synth_1..N} of M rows each; an
 * update transaction is a number of single-row updates (10 in the study) of random rows in random
 * tables, sent as one multi-statement simple query, so the middleware sees one request; a query is
 * a read-only transaction of the same size (point reads of random rows, one statement).
 * <p>
 * Under primary copy ({@link #withPrimaries}) each update is labelled by where it is submitted:
 * {@value #UPDATE_LW} (local write) when the emulator's site is the primary that executes it,
 * {@value #UPDATE_RW} (remote write) otherwise. The transactions themselves do not change (random
 * tables, as in the study, where about 1/n of them are local on n sites); only the label does.
 */
public final class SyntheticWorkload implements Workload {
    public static final int DEFAULT_TABLES = 10, DEFAULT_ROWS = 10_000, DEFAULT_STATEMENTS = 10;
    public static final double DEFAULT_UPDATE_FRACTION = 0.5;
    public static final String UPDATE = "update", QUERY = "query", UPDATE_LW = "update-lw", UPDATE_RW = "update-rw";

    private final int tables, rows, statements;
    private final double updateFraction;
    /** Primary site per table ({@code synth_N}); empty: updates are not labelled local or remote. */
    private final Map<String, String> primaries;
    /** The site this copy submits to (labelled workloads only), else null. */
    private final String site;
    /** The configured sites in order (labelled workloads only): ties between primaries go by it. */
    private final List<String> siteOrder;

    public SyntheticWorkload() { this(DEFAULT_TABLES, DEFAULT_ROWS, DEFAULT_UPDATE_FRACTION, DEFAULT_STATEMENTS); }

    public SyntheticWorkload(int tables, int rows, double updateFraction, int statements) {
        this(tables, rows, updateFraction, statements, Map.of(), null, List.of());
    }

    private SyntheticWorkload(int tables, int rows, double updateFraction, int statements, Map<String, String> primaries, String site,
                              List<String> siteOrder) {
        if (tables < 1 || rows < 1 || statements < 1) throw new IllegalArgumentException("synthetic workload: tables, rows and statements must be >= 1");
        if (!(updateFraction >= 0 && updateFraction <= 1)) throw new IllegalArgumentException("synthetic workload: update fraction must be in [0, 1], not " + updateFraction);
        this.tables = tables;
        this.rows = rows;
        this.updateFraction = updateFraction;
        this.statements = statements;
        this.primaries = Map.copyOf(primaries);
        this.site = site;
        this.siteOrder = List.copyOf(siteOrder);
    }

    /**
     * The same workload with updates labelled {@value #UPDATE_LW} or {@value #UPDATE_RW}: {@code primaryByTable}
     * names the primary site of every table {@code synth_1..N} (as {@code tables.public.synth_N.primary}
     * in the middleware's configuration), {@code siteOrder} the configured sites in order. Each emulator
     * runs its {@link #forSite} copy.
     */
    public SyntheticWorkload withPrimaries(Map<String, String> primaryByTable, List<String> siteOrder) {
        for (int t = 1; t <= tables; t++)
            if (!primaryByTable.containsKey(table(t))) throw new IllegalArgumentException("synthetic workload: no primary site for table " + table(t));
        return new SyntheticWorkload(tables, rows, updateFraction, statements, primaryByTable, null, siteOrder);
    }

    /** Primary site per table, empty when updates are not labelled. */
    public Map<String, String> primaries() { return primaries; }

    /** A labelled workload bound to the site its emulator submits to; unlabelled: this one. */
    @Override public SyntheticWorkload forSite(String site) {
        return primaries.isEmpty() ? this : new SyntheticWorkload(tables, rows, updateFraction, statements, primaries, site, siteOrder);
    }

    /**
     * The site that executes an update writing {@code written}, submitted at {@code origin}, under
     * primary copy: the primary of the most written tables, a tie going to the origin if it is among
     * them, else to the tied site first in {@code siteOrder}. The middleware's rule
     * ({@code org.wanrep.txn.ExecutionPolicy.preferredSite}), which a test in experiments compares it with.
     */
    public static String executorSite(SortedSet<String> written, Map<String, String> primaryByTable, String origin, List<String> siteOrder) {
        Map<String, Integer> votes = new java.util.HashMap<>();
        for (String t : written) votes.merge(primaryByTable.get(t), 1, Integer::sum);
        int max = java.util.Collections.max(votes.values());
        if (votes.getOrDefault(origin, 0) == max) return origin;
        for (String s : siteOrder) if (votes.getOrDefault(s, 0) == max) return s;
        throw new IllegalStateException("no configured site among " + votes.keySet());
    }

    /** Primaries spread round-robin: {@code synth_1} at the first site, {@code synth_2} at the second, and so on. */
    public static Map<String, String> roundRobinPrimaries(int tables, List<String> sites) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int t = 1; t <= tables; t++) m.put(table(t), sites.get((t - 1) % sites.size()));
        return m;
    }

    public int tables() { return tables; }
    public int rows() { return rows; }
    public double updateFraction() { return updateFraction; }
    public int statements() { return statements; }

    @Override public String name() { return "synthetic"; }

    @Override public List<String> types() { return primaries.isEmpty() ? List.of(UPDATE, QUERY) : List.of(UPDATE_LW, UPDATE_RW, QUERY); }

    /** Simple query mode: the updates of one transaction go as one Query message, one request. */
    @Override public Properties connectionProperties() {
        Properties p = new Properties();
        p.setProperty("preferQueryMode", "simple");
        return p;
    }

    @Override public void load(Connection c, PrintStream progress) throws SQLException {
        try (Statement st = c.createStatement()) {
            for (int t = 1; t <= tables; t++) {
                st.execute("DROP TABLE IF EXISTS " + table(t));
                st.execute("CREATE TABLE " + table(t) + "(id int PRIMARY KEY, v bigint NOT NULL, pad text NOT NULL)");
                st.execute("INSERT INTO " + table(t) + " SELECT g, 0, repeat('x', 80) FROM generate_series(1, " + rows + ") g");
                st.execute("ANALYZE " + table(t));
                if (progress != null) progress.printf("  %s: %,d rows%n", table(t), rows);
            }
        }
    }

    @Override public Transaction next(Random r) {
        if (!(r.nextDouble() < updateFraction)) return new SqlTransaction(QUERY, true, querySql(r));
        if (primaries.isEmpty()) return new SqlTransaction(UPDATE, false, updateSql(r));
        if (site == null) throw new IllegalStateException("a labelled synthetic workload runs bound to its site: call forSite first");
        SortedSet<String> written = new TreeSet<>();
        String sql = updateSql(r, written);
        return new SqlTransaction(site.equals(executorSite(written, primaries, site, siteOrder)) ? UPDATE_LW : UPDATE_RW, false, sql);
    }

    public static String table(int t) { return "synth_" + t; }

    /** One update transaction: single-row updates separated by semicolons (one request). */
    public String updateSql(Random r) { return updateSql(r, new TreeSet<>()); }

    private String updateSql(Random r, SortedSet<String> written) {
        StringBuilder b = new StringBuilder(statements * 48);
        for (int i = 0; i < statements; i++) {
            if (i > 0) b.append("; ");
            String t = table(1 + r.nextInt(tables));
            written.add(t);
            b.append("UPDATE ").append(t).append(" SET v = v + 1 WHERE id = ").append(1 + r.nextInt(rows));
        }
        return b.toString();
    }

    /** A read-only transaction of the same size: point reads of random rows in one statement. */
    public String querySql(Random r) {
        StringBuilder b = new StringBuilder("SELECT sum(v) FROM (");
        for (int i = 0; i < statements; i++) {
            if (i > 0) b.append(" UNION ALL ");
            b.append("SELECT v FROM ").append(table(1 + r.nextInt(tables))).append(" WHERE id = ").append(1 + r.nextInt(rows));
        }
        return b.append(") q").toString();
    }

    /** The update transaction as a pgbench script ({@code \;} keeps it one request). */
    public String pgbenchUpdateScript() {
        StringBuilder b = new StringBuilder();
        for (int i = 1; i <= statements; i++) b.append("\\set t").append(i).append(" random(1, ").append(tables).append(")\n")
                .append("\\set r").append(i).append(" random(1, ").append(rows).append(")\n");
        for (int i = 1; i <= statements; i++) {
            if (i > 1) b.append(" \\; ");
            b.append("UPDATE synth_:t").append(i).append(" SET v = v + 1 WHERE id = :r").append(i);
        }
        return b.append("\n").toString();
    }

    /**
     * The update transaction as a pgbench script where each client updates random rows of its own
     * table only ({@code client_id} modulo the tables): no two clients conflict at the table level,
     * so what it measures is the cost of the path, not the waits of table locking.
     */
    public String pgbenchOwnTableUpdateScript() {
        StringBuilder b = new StringBuilder("\\set tb :client_id % ").append(tables).append(" + 1\n");
        for (int i = 1; i <= statements; i++) b.append("\\set r").append(i).append(" random(1, ").append(rows).append(")\n");
        for (int i = 1; i <= statements; i++) {
            if (i > 1) b.append(" \\; ");
            b.append("UPDATE synth_:tb SET v = v + 1 WHERE id = :r").append(i);
        }
        return b.append("\n").toString();
    }

    /** Drops the tables {@link #load} created. */
    public void drop(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            for (int t = 1; t <= tables; t++) st.execute("DROP TABLE IF EXISTS " + table(t));
        }
    }

    @Override public String toString() {
        return String.format(java.util.Locale.ROOT, "synthetic (%d tables x %,d rows, %d statements per transaction, %.0f%% updates%s)",
                tables, rows, statements, updateFraction * 100, primaries.isEmpty() ? "" : ", labelled local/remote writes by primary"
                        + (site == null ? "" : " at " + site));
    }
}
