package org.wanrep.bench;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Random;

/**
 * The study's synthetic database: N tables of M rows; an update transaction is 10 updates of
 * random rows in random tables, sent as one request.
 */
public final class Synthetic {
    private Synthetic() {}

    public static final int TABLES = 10, ROWS = 10_000;

    public static void create(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            for (int t = 1; t <= TABLES; t++) {
                st.execute("DROP TABLE IF EXISTS synth_" + t);
                st.execute("CREATE TABLE synth_" + t + "(id int PRIMARY KEY, v bigint NOT NULL, pad text NOT NULL)");
                st.execute("INSERT INTO synth_" + t + " SELECT g, 0, repeat('x', 80) FROM generate_series(1, " + ROWS + ") g");
                st.execute("ANALYZE synth_" + t);
            }
        }
    }

    /** One update transaction: 10 updates in one multi-statement request. */
    public static String updateTxn(Random r) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 10; i++) {
            if (i > 0) b.append("; ");
            b.append("UPDATE synth_").append(1 + r.nextInt(TABLES)).append(" SET v = v + 1 WHERE id = ").append(1 + r.nextInt(ROWS));
        }
        return b.toString();
    }

    /** A read-only transaction of similar size: 10 point reads in one request. */
    public static String queryTxn(Random r) {
        StringBuilder b = new StringBuilder("SELECT sum(v) FROM (");
        for (int i = 0; i < 10; i++) {
            if (i > 0) b.append(" UNION ALL ");
            b.append("SELECT v FROM synth_").append(1 + r.nextInt(TABLES)).append(" WHERE id = ").append(1 + r.nextInt(ROWS));
        }
        return b.append(") q").toString();
    }

    /** The same transaction as a pgbench script line (\; keeps it one request). */
    public static String pgbenchUpdateScript() {
        StringBuilder b = new StringBuilder();
        for (int i = 1; i <= 10; i++) b.append("\\set t").append(i).append(" random(1, ").append(TABLES).append(")\n")
                .append("\\set r").append(i).append(" random(1, ").append(ROWS).append(")\n");
        for (int i = 1; i <= 10; i++) {
            if (i > 1) b.append(" \\; ");
            b.append("UPDATE synth_:t").append(i).append(" SET v = v + 1 WHERE id = :r").append(i);
        }
        return b.append("\n").toString();
    }
}
