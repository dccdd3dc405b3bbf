package org.wanrep.emulator.synthetic;

import org.wanrep.emulator.workload.SqlTransaction;
import org.wanrep.emulator.workload.Transaction;
import org.wanrep.emulator.workload.Workload;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Properties;
import java.util.Random;

/**
 * The study's synthetic database and transactions: N tables {@code synth_1..N} of M rows each; an
 * update transaction is a number of single-row updates (10 in the study) of random rows in random
 * tables, sent as one multi-statement simple query, so the middleware sees one request; a query is
 * a read-only transaction of the same size (point reads of random rows, one statement).
 */
public final class SyntheticWorkload implements Workload {
    public static final int DEFAULT_TABLES = 10, DEFAULT_ROWS = 10_000, DEFAULT_STATEMENTS = 10;
    public static final double DEFAULT_UPDATE_FRACTION = 0.5;
    public static final String UPDATE = "update", QUERY = "query";

    private final int tables, rows, statements;
    private final double updateFraction;

    public SyntheticWorkload() { this(DEFAULT_TABLES, DEFAULT_ROWS, DEFAULT_UPDATE_FRACTION, DEFAULT_STATEMENTS); }

    public SyntheticWorkload(int tables, int rows, double updateFraction, int statements) {
        if (tables < 1 || rows < 1 || statements < 1) throw new IllegalArgumentException("synthetic workload: tables, rows and statements must be >= 1");
        if (!(updateFraction >= 0 && updateFraction <= 1)) throw new IllegalArgumentException("synthetic workload: update fraction must be in [0, 1], not " + updateFraction);
        this.tables = tables;
        this.rows = rows;
        this.updateFraction = updateFraction;
        this.statements = statements;
    }

    public int tables() { return tables; }
    public int rows() { return rows; }
    public double updateFraction() { return updateFraction; }
    public int statements() { return statements; }

    @Override public String name() { return "synthetic"; }

    @Override public List<String> types() { return List.of(UPDATE, QUERY); }

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
        return r.nextDouble() < updateFraction ? new SqlTransaction(UPDATE, false, updateSql(r)) : new SqlTransaction(QUERY, true, querySql(r));
    }

    public static String table(int t) { return "synth_" + t; }

    /** One update transaction: single-row updates separated by semicolons (one request). */
    public String updateSql(Random r) {
        StringBuilder b = new StringBuilder(statements * 48);
        for (int i = 0; i < statements; i++) {
            if (i > 0) b.append("; ");
            b.append("UPDATE ").append(table(1 + r.nextInt(tables))).append(" SET v = v + 1 WHERE id = ").append(1 + r.nextInt(rows));
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
        return String.format(java.util.Locale.ROOT, "synthetic (%d tables x %,d rows, %d statements per transaction, %.0f%% updates)",
                tables, rows, statements, updateFraction * 100);
    }
}
