package org.wanrep.emulator;

import org.wanrep.emulator.workload.Transaction;

import java.sql.Connection;
import java.sql.SQLException;

/** Runs a transaction until it commits, rerunning it after serialization failures and deadlocks. */
final class Attempts {
    private Attempts() {}

    /** How a transaction ended: committed or not, reruns, the error that ended it, whether the connection died. */
    record Outcome(boolean committed, int retries, String error, boolean connectionLost) {}

    static Outcome run(Transaction t, Connection c, int maxRetries) {
        int retries = 0;
        while (true) {
            try {
                t.execute(c);
                return new Outcome(true, retries, null, false);
            } catch (SQLException e) {
                boolean lost = SqlStates.connectionLost(e.getSQLState()) || isClosed(c);
                if (!lost) restoreAutocommit(c);
                if (SqlStates.retryable(e.getSQLState()) && retries < maxRetries && !lost) {
                    retries++;
                    continue;
                }
                String msg = describe(e);
                if (SqlStates.retryable(e.getSQLState())) msg = "gave up after " + retries + " retries: " + msg;
                return new Outcome(false, retries, msg, lost);
            } catch (RuntimeException e) {
                // a workload bug should show up in the results, not kill the worker
                return new Outcome(false, retries, e.toString(), isClosed(c));
            }
        }
    }

    /** The first line of the message and the SQLSTATE. */
    static String describe(SQLException e) {
        String m = String.valueOf(e.getMessage());
        int nl = m.indexOf('\n');
        if (nl >= 0) m = m.substring(0, nl);
        return e.getSQLState() == null ? m : m + " (SQLSTATE " + e.getSQLState() + ")";
    }

    /** A transaction that failed inside an explicit block leaves the connection as it found it. */
    private static void restoreAutocommit(Connection c) {
        try {
            if (!c.getAutoCommit()) {
                c.rollback();
                c.setAutoCommit(true);
            }
        } catch (SQLException ignored) {
            // the next transaction on this connection reports whatever is wrong with it
        }
    }

    private static boolean isClosed(Connection c) {
        try {
            return c.isClosed();
        } catch (SQLException e) {
            return true;
        }
    }
}
