package org.wanrep.sql;

import org.junit.jupiter.api.Test;
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

    /** A certified block's joined updates, as pgbench's interactive script leaves them: settled without lexing. */
    @Test
    void aJoinedBlockLogIsSettledAtFirstLook() {
        // joined as ReplayLog joins them: "\n;\n" after each text's own semicolon, so an empty statement between
        String sql = "UPDATE pgbench_accounts SET abalance = abalance + -4040 WHERE aid = 77;\n;\nUPDATE pgbench_tellers SET tbalance = tbalance + -4040 WHERE tid = 3;\n;\n"
                + "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (3, 1, 77, -4040, " + TimeRewriting.rewrite("CURRENT_TIMESTAMP") + ");";
        assertThat(sql).contains("'");
        assertThat(SessionCommands.plainlyKeepsSession(sql)).isTrue();
        assertThat(SessionCommands.changesSessionStateByTokens(sql)).isFalse();
        assertThat(SessionCommands.plainlyKeepsSession(sql + " SET search_path = x")).isFalse();
        assertThat(SessionCommands.plainlyKeepsSession("UPDATE t SET a = 'x;y'; UPDATE t SET b = 1")).as("a semicolon in a literal").isFalse();
        assertThat(SessionCommands.plainlyKeepsSession("UPDATE t SET a = 1;\n;\nSET search_path = x")).as("a session command after an empty statement").isFalse();
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
    /**
     * The one-pass reading over tokens against the statement-by-statement reading of normalized text it
     * replaced (kept for dollar-quoted bodies): on random texts from the words that matter, it never says
     * "no state left" where the text reading says "left" (a missed DISCARD ALL leaks a session's state).
     */
    @Test
    void tokenReadingIsNeverLessCautiousThanTheTextReading() {
        long seed = Long.getLong("wanrep.sessioncommands.seed", System.nanoTime());
        System.out.println("SessionCommandsTest seed " + seed + " (-Dwanrep.sessioncommands.seed=" + seed + " repeats it)");
        java.util.Random rnd = new java.util.Random(seed);
        String[] parts = {"SET", "set", "LOCAL", "local", "TRANSACTION", "constraints", "session", "search_path", "=", "x", "TEMP", "temporary",
                "pg_temp", "pg_temp.f", "temp$1", "tempé", "\"temp\"", "\"TEMP\"", "\"set_config\"", "set_config", "pg_catalog.set_config",
                "pg_advisory_lock", "pg_try_advisory_lock_shared", "pg_advisory_xact_lock", "pg_advisory_lockx", "(", ")", ",", ",", "true", "TRUE",
                "false", "'a'", "'t'", "1", "$1", "declare", "DECLARE", "with", "WITH", "hold", "HOLD", "\"hold\"", "cursor", "for", "select",
                "SELECT", "update", "discard", "DISCARD", "all", "ALL", "deallocate", "prepare", "reset", "listen", "load", "do", "into", "t",
                ";", ";", "/* c */", "-- c\n", " ", "  ", "\n", "(true)", "abc", "E'x\\'y'", "'it''s'", "1e5", ".", "::", "temp1", "x_temp"};
        int more = 0;
        for (int n = 0; n < 20_000; n++) {
            StringBuilder b = new StringBuilder();
            int len = 1 + rnd.nextInt(12);
            for (int k = 0; k < len; k++) {
                b.append(parts[rnd.nextInt(parts.length)]);
                if (rnd.nextInt(3) > 0) b.append(' ');
            }
            String sql = b.toString();
            boolean byText = SessionCommands.changesSessionStateByText(sql), byTokens = SessionCommands.changesSessionState(sql);
            if (byText) assertThat(byTokens).as("seed %d: %s", seed, sql).isTrue();
            else if (byTokens) more++;
            assertThat(SessionCommands.discardsStatements(sql)).as("seed %d: %s", seed, sql).isEqualTo(SessionCommands.discardsStatementsByText(sql));
        }
        // where they differ, it is rare (a parameter glued to a word, e.g. $1temp): the token reading is the same rule, not a blunter one
        assertThat(more).as("texts only the token reading takes as changing the session").isLessThan(200);
    }

    /** The first look without lexing says "keeps the session" only where the token reading does, on random texts. */
    @Test
    void firstLookIsNeverLessCautiousThanTheTokenReading() {
        long seed = Long.getLong("wanrep.sessioncommands.seed", System.nanoTime());
        System.out.println("SessionCommandsTest first look seed " + seed + " (-Dwanrep.sessioncommands.seed=" + seed + " repeats it)");
        java.util.Random rnd = new java.util.Random(seed);
        String[] starts = {"UPDATE", "update", "insert", "SELECT", "sélect", "set", "SET", "set_", "do", "do_x", "reset", "reset1", "ſet",
                "declare", "with", "(select", " \n update", "/* c */ set", "-- c\nset", "discard", "Prepare", "listen", "load", "\"set\"", "E'x'"};
        String[] parts = {"t", "x", "=", "1", "'a'", "'temp'", "temp", "TEMPORARY", "pg_temp.t", "set_config", "SET_CONFIG(", "pg_advisory_lock(",
                "advisory", "(", ")", ",", ";", ";", "; SET x = 1", "; reset all", "with hold", "$$ set x $$", "true", "\u2003", "ſet_config",
                "/* c */", "-- c\n", " ", "\n", "local", "transaction", "abc",
                "; UPDATE t SET x = 1", "; select 1", ";insert into t values (1)", "; declare c cursor for select 1", ";do", "; \tSET", "; ;", ";\n;\n",
                "'a;b'", "\"x;y\"", "\\", "- -1", "/ 2", "E'\\';set x'"};
        int plain = 0;
        for (int n = 0; n < 20_000; n++) {
            StringBuilder b = new StringBuilder(starts[rnd.nextInt(starts.length)]);
            int len = rnd.nextInt(10);
            for (int k = 0; k < len; k++) {
                if (rnd.nextInt(3) > 0) b.append(' ');
                b.append(parts[rnd.nextInt(parts.length)]);
            }
            String sql = b.toString();
            if (SessionCommands.plainlyKeepsSession(sql)) {
                plain++;
                assertThat(SessionCommands.changesSessionStateByTokens(sql)).as("seed %d: %s", seed, sql).isFalse();
                assertThat(SessionCommands.changesSessionStateByText(sql)).as("seed %d: %s", seed, sql).isFalse();
            }
        }
        assertThat(plain).as("texts the first look settles").isGreaterThan(1_000);
    }
}
