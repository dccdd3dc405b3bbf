package org.wanrep.emulator;

import org.wanrep.emulator.workload.Workload;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Properties;

/**
 * Creates and loads a workload's data through the first site; the middleware replicates it. Then
 * at every other site a replicated no-op DDL statement: DDL takes every table's lock in delivery
 * order, so when it returns that site has committed the whole load, and its local snapshots see it.
 */
public final class DataLoad {
    private DataLoad() {}

    static final String BARRIER = "DROP TABLE IF EXISTS wanrep_emulator_barrier";

    public static void throughFirstSite(Workload w, List<SiteTarget> targets, Properties props, PrintStream out) throws SQLException {
        SiteTarget first = targets.get(0);
        if (out != null) out.printf("loading %s through %s...%n", w, first.name());
        long t0 = System.nanoTime();
        try (Connection c = DriverManager.getConnection(first.jdbcUrl(), props)) {
            w.load(c, out);
        }
        for (SiteTarget t : targets.subList(1, targets.size())) {
            try (Connection c = DriverManager.getConnection(t.jdbcUrl(), props); Statement st = c.createStatement()) {
                st.execute(BARRIER);
            }
        }
        if (out != null) out.printf("loaded in %.1f s%s%n", (System.nanoTime() - t0) / 1e9, targets.size() > 1 ? ", every site has it" : "");
    }
}
