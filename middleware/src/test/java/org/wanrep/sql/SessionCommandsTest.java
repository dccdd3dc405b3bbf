package org.wanrep.sql;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

class SessionCommandsTest {
    @ParameterizedTest
    @ValueSource(strings = {
            "UPDATE accounts SET abalance = abalance + 1 WHERE aid = 3",
            "update t set x = 'set ' where id = 1; insert into h values ('reset', 'temp')",
            "INSERT INTO t (settings, attempt) VALUES ('SET search_path = x', 1)",
            "SELECT pg_catalog.set_config('wanrep.x', 'y', true)",
            "SET LOCAL statement_timeout = 0; UPDATE t SET a = 1",
            "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
            "SET CONSTRAINTS ALL DEFERRED",
            "DECLARE c CURSOR FOR SELECT 1",
            "SELECT pg_advisory_xact_lock(1)",
            "-- SET search_path = evil\nUPDATE t SET a = 1",
            "UPDATE t SET note = $$;SET x = 1$$ WHERE id = 1",
    })
    void statementsThatLeaveNoSessionState(String sql) {
        assertThat(SessionCommands.changesSessionState(sql)).as(sql).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "SET search_path = x",
            "set session timezone = 'UTC'",
            "UPDATE t SET a = 1; SET datestyle = 'ISO'",
            "  /* hint */ SeT   standard_conforming_strings TO off",
            "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
            "RESET ALL",
            "DISCARD ALL",
            "PREPARE p AS SELECT 1",
            "DEALLOCATE p",
            "LISTEN ch",
            "LOAD 'auto_explain'",
            "CREATE TEMP TABLE x (a int)",
            "CREATE LOCAL TEMPORARY TABLE x (a int)",
            "SELECT 1 INTO TEMP x",
            "CREATE FUNCTION pg_temp.f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
            "DECLARE c CURSOR WITH HOLD FOR SELECT 1",
            "SELECT set_config('search_path', 'x', false)",
            "SELECT set_config('a', 'b', true), set_config('search_path', 'x', false)",
            "SELECT set_config('search_path', 'x', $1)",
            "SELECT pg_advisory_lock(1)",
            "DO $$ BEGIN EXECUTE 'SET search_path = x'; END $$",
    })
    void statementsThatChangeTheSession(String sql) {
        assertThat(SessionCommands.changesSessionState(sql)).as(sql).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"DISCARD ALL", "discard   all ;", "SELECT 1; DEALLOCATE ALL", "DEALLOCATE PREPARE ALL", "/* x */ discard all"})
    void discardingEveryStatement(String sql) {
        assertThat(SessionCommands.discardsStatements(sql)).as(sql).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"INSERT INTO log VALUES ('discard all')", "DEALLOCATE p", "DISCARD TEMP", "-- discard all\nSELECT 1",
            "SELECT 'deallocate all'", "DEALLOCATE alldone"})
    void notDiscardingEveryStatement(String sql) {
        assertThat(SessionCommands.discardsStatements(sql)).as(sql).isFalse();
    }
}
