package org.wanrep.exec;

import org.junit.jupiter.api.Test;
import org.wanrep.backend.BackendTarget;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.txn.ReplicationEngine;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;

import static org.assertj.core.api.Assertions.assertThat;

/** The history marker of write-set sites lives in the replica: a new process (a restart) finds it. Real PostgreSQL. */
class ReplicaHistoryMarkerTest {
    @Test
    void theMarkOutlivesTheProcessThatWroteItUntilANewHistoryClearsIt() throws Exception {
        try (LocalPostgres pg = LocalPostgres.startTemporary()) {
            BackendTarget target = new BackendTarget(pg.host(), pg.port(), "postgres", "");
            assertThat(ReplicaPosition.historyMarker(target).marked()).isFalse();   // a new replica
            ReplicaPosition.historyMarker(target).mark();
            ReplicationEngine.HistoryMarker restarted = ReplicaPosition.historyMarker(target);
            assertThat(restarted.marked()).isTrue();
            try (Connection c = pg.connect(); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT count(*) FROM wanrep.history")) {
                rs.next();
                assertThat(rs.getLong(1)).isEqualTo(1);
            }
            restarted.clear();
            assertThat(ReplicaPosition.historyMarker(target).marked()).isFalse();
        }
    }
}
