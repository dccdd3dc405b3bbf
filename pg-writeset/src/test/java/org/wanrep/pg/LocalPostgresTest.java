package org.wanrep.pg;

import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;

import static org.assertj.core.api.Assertions.assertThat;

class LocalPostgresTest {
    @Test
    void startsAClusterReadyForLogicalDecodingWithWal2json() throws Exception {
        try (LocalPostgres pg = LocalPostgres.startTemporary(); Connection c = pg.connect(); Statement st = c.createStatement()) {
            try (ResultSet rs = st.executeQuery("SHOW wal_level")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo("logical");
            }
            st.execute("CREATE TABLE t(id int primary key, v text)");
            st.execute("SELECT pg_create_logical_replication_slot('probe', 'wal2json')");
            st.execute("INSERT INTO t VALUES (1, 'x')");
            try (ResultSet rs = st.executeQuery("SELECT data FROM pg_logical_slot_get_changes('probe', NULL, NULL, 'format-version', '2')")) {
                StringBuilder all = new StringBuilder();
                while (rs.next()) all.append(rs.getString(1));
                assertThat(all.toString()).contains("\"action\":\"I\"").contains("\"table\":\"t\"");
            }
            st.execute("SELECT pg_drop_replication_slot('probe')");
        }
    }
}
