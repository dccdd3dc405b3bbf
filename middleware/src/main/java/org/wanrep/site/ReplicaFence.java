package org.wanrep.site;

import org.wanrep.backend.BackendTarget;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Before a starting site reads what its replica has (its positions, the prepared blocks left in it): every other
 * session of the replica is ended, and waited for. An earlier incarnation of the site (killed, or stopped while its
 * replica was busy) can leave a backend still running a query string that ends in COMMIT: a replay or an update
 * waiting on the rows of a block left prepared, say. Once the restart resolved that block, such a backend would
 * commit after the positions were read, and the site would then run the transaction a second time (it stopped on
 * the duplicate position: PgbenchFaultsTest). PostgreSQL ends a terminated backend's transaction before the process
 * exits (a commit under way completes), so once the processes are gone what the replica has is settled.
 */
final class ReplicaFence {
    private ReplicaFence() {}

    /**
     * Ends every client backend of the replica but this connection's, waiting up to {@code wait} for each to exit, and
     * returns their process ids. Throws if one is still there then: what the replica has cannot be known while it runs.
     */
    static List<Integer> endOtherSessions(BackendTarget target, Duration wait) throws SQLException {
        List<Integer> ended = new ArrayList<>();
        try (Connection c = target.jdbc(Site.SERVICE_DATABASE, "wanrep-fence"); Statement st = c.createStatement()) {
            // pg_terminate_backend(pid, timeout) waits until the process is gone (PostgreSQL 14 and later)
            try (ResultSet rs = st.executeQuery("SELECT pid, pg_catalog.pg_terminate_backend(pid, " + Math.max(1, wait.toMillis()) + ")"
                    + " FROM pg_catalog.pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_catalog.pg_backend_pid()")) {
                while (rs.next()) ended.add(rs.getInt(1));
            }
            if (ended.isEmpty()) return ended;
            // a pid that was gone already made pg_terminate_backend answer false: what counts is that none is left
            StringBuilder pids = new StringBuilder();
            for (int p : ended) pids.append(pids.isEmpty() ? "" : ", ").append(p);
            try (ResultSet rs = st.executeQuery("SELECT pid FROM pg_catalog.pg_stat_activity WHERE pid IN (" + pids + ")")) {
                if (rs.next())
                    throw new SQLException("the replica's session " + rs.getInt(1) + " did not end within " + wait.toMillis()
                            + " ms: a session an earlier incarnation of this site left could still commit", "55006");
            }
        }
        return ended;
    }
}
