package org.wanrep.bench;

import org.junit.jupiter.api.Test;
import org.wanrep.pg.LocalPostgres;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;

import static org.assertj.core.api.Assertions.assertThat;

/** The proxy benchmark's floor must relay faithfully, or its ceiling would be meaningless. */
class ByteRelayTest {
    @Test
    void relaysQueriesAndLargeResultsBetweenPgjdbcAndPostgres() throws Exception {
        try (LocalPostgres pg = LocalPostgres.startTemporary(); ByteRelay relay = new ByteRelay(pg.dataDir(), pg.port())) {
            for (int session = 0; session < 3; session++) {
                try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + relay.port() + "/postgres", "postgres", "");
                     Statement s = c.createStatement();
                     ResultSet rs = s.executeQuery("SELECT count(*), sum(length(repeat('x', g))) FROM generate_series(1, 2000) g")) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getLong(1)).isEqualTo(2000);
                    assertThat(rs.getLong(2)).isEqualTo(2000L * 2001 / 2);
                }
            }
            try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + relay.port() + "/postgres", "postgres", "");
                 Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT repeat('y', 1000) FROM generate_series(1, 500)")) {
                int rows = 0;
                while (rs.next()) {
                    assertThat(rs.getString(1)).hasSize(1000);
                    rows++;
                }
                assertThat(rows).isEqualTo(500);
            }
        }
    }
}
