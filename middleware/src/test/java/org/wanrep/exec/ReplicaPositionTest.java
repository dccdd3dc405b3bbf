package org.wanrep.exec;

import org.junit.jupiter.api.Test;
import org.wanrep.backend.BackendTarget;
import org.wanrep.pg.LocalPostgres;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The position and certified-block records are written by SECURITY DEFINER functions that clients' roles call in their
 * own sessions, whose search_path the client sets: the functions must not run anything the client's schemas define.
 * Real PostgreSQL.
 */
class ReplicaPositionTest {
    @Test
    void aClientsSearchPathCannotReachTheRecordingFunctions() throws Exception {
        try (LocalPostgres pg = LocalPostgres.startTemporary()) {
            BackendTarget target = new BackendTarget(pg.host(), pg.port(), "postgres", "");
            ReplicaPosition.prepare(target);
            try (Connection c = pg.connect(); Statement st = c.createStatement()) {
                st.execute("CREATE ROLE app LOGIN");
                st.execute("CREATE SCHEMA evil AUTHORIZATION app");
            }
            try (Connection c = DriverManager.getConnection(pg.jdbcUrl("postgres"), "app", ""); Statement st = c.createStatement()) {
                // operators the bodies would find first if they named them unqualified: they fail the call
                st.execute("CREATE FUNCTION evil.lt(bigint, bigint) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hijacked <'; END $$");
                st.execute("CREATE OPERATOR evil.< (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = evil.lt)");
                st.execute("CREATE FUNCTION evil.lt(timestamptz, timestamptz) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hijacked <'; END $$");
                st.execute("CREATE OPERATOR evil.< (LEFTARG = timestamptz, RIGHTARG = timestamptz, FUNCTION = evil.lt)");
                st.execute("CREATE FUNCTION evil.clock_timestamp() RETURNS timestamptz LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hijacked clock'; END $$");
                st.execute("SET search_path = evil, pg_catalog");
                st.execute(ReplicaPosition.recordSql(1, 0, false));
                st.execute(ReplicaPosition.recordSql(2, 0, false));
                st.execute(ReplicaPosition.recordSql(3, 2, true));   // compacts: deletes the rows below 2
                st.execute(org.wanrep.txn.PositionSql.markCertified(new org.wanrep.txn.RequestId("a", 1), true));
                // the role may call the functions, not write the tables itself
                assertThatThrownBy(() -> st.execute("INSERT INTO wanrep.position VALUES (9, 9)")).isInstanceOf(SQLException.class)
                        .extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("42501");
            }
            try (Connection c = pg.connect(); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT string_agg(gsn::text, ',' ORDER BY gsn), (SELECT count(*) FROM wanrep.certified) FROM wanrep.position")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo("2,3");
                assertThat(rs.getLong(2)).isEqualTo(1);
            }
        }
    }
}
