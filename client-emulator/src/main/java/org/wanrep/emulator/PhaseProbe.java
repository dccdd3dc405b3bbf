package org.wanrep.emulator;

import org.wanrep.emulator.report.PhaseRow;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * Reads a wanrep proxy's response-time breakdown of the updates its site originated:
 * {@code RESET wanrep.phases} when the measured window opens, {@code SHOW wanrep.phases} when it
 * closes. A plain PostgreSQL server has no such breakdown; the probe then says so and stays idle.
 */
final class PhaseProbe implements AutoCloseable {
    private final Connection c;
    private final String note;

    private PhaseProbe(Connection c, String note) {
        this.c = c;
        this.note = note;
    }

    static PhaseProbe open(SiteTarget t, Properties p) throws SQLException {
        Connection c = DriverManager.getConnection(t.jdbcUrl(), p);
        try (Statement st = c.createStatement()) {
            st.executeQuery("SHOW wanrep.phases").close();
            return new PhaseProbe(c, null);
        } catch (SQLException e) {
            c.close();
            return new PhaseProbe(null, "no middleware phases: " + t.name() + " is not a wanrep proxy (" + Attempts.describe(e) + ")");
        }
    }

    boolean available() { return c != null; }

    /** Why there are no phases, or null. */
    String note() { return note; }

    void reset() throws SQLException {
        if (c == null) return;
        try (Statement st = c.createStatement()) {
            st.execute("RESET wanrep.phases");
        }
    }

    List<PhaseRow> read() throws SQLException {
        List<PhaseRow> rows = new ArrayList<>();
        if (c == null) return rows;
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SHOW wanrep.phases")) {
            while (rs.next())
                rows.add(new PhaseRow(rs.getString("phase"), Long.parseLong(rs.getString("count")), Double.parseDouble(rs.getString("mean_ms")),
                        Double.parseDouble(rs.getString("p50_ms")), Double.parseDouble(rs.getString("p99_ms"))));
        }
        return rows;
    }

    @Override public void close() throws SQLException {
        if (c != null) c.close();
    }
}
