package org.wanrep.emulator.workload;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A transaction that is one SQL text sent with one {@link Statement#execute}: an autocommit
 * statement, or several separated by semicolons (one request; a simple Query when the connection
 * has {@code preferQueryMode=simple}).
 */
public record SqlTransaction(String type, boolean readOnly, String sql) implements Transaction {
    @Override public void execute(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }
}
