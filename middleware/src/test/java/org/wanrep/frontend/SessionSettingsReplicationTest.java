package org.wanrep.frontend;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Session settings that change what an update does (issue 10, defect 3): an update must have the
 * same effect at every site whatever its origin's session state, and the client's answer must be
 * the cluster's. Each test changes its session's settings through the proxy of one site of three,
 * updates, then reads every replica directly.
 */
class SessionSettingsReplicationTest {
    static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = new TestCluster(List.of("a", "b", "c"), "none", Map.of("delivery", "safe", "users", "postgres:trust,alice:trust",
                "proxy.session_role", "replica-user"));   // this test is about sessions that all run as the replica user
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) cluster.close();
    }

    /** The rows of {@code query} at every replica, read directly (not through the proxies). */
    private static List<List<String>> atEverySite(String query) throws Exception {
        cluster.awaitQuiescent();
        List<List<String>> out = new ArrayList<>();
        for (var pg : cluster.pgs) {
            List<String> rows = new ArrayList<>();
            try (Connection c = pg.connect(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(query)) {
                while (rs.next()) rows.add(rs.getString(1));
            }
            out.add(rows);
        }
        return out;
    }

    private static void ddl(String... sql) throws Exception {
        try (Connection c = cluster.connect(0); Statement st = c.createStatement()) {
            for (String s : sql) st.execute(s);
        }
        cluster.awaitQuiescent();
    }

    /**
     * A client's statement_timeout (or lock_timeout) never ends an ordered update at its own site only: the others
     * commit it. It cancelled our BEGIN on the client's backend before, and the site stopped (the request might have
     * committed on its own there).
     */
    @Test
    void aClientsTimeoutsDoNotEndItsUpdatesAtItsSiteOnly() throws Exception {
        ddl("CREATE TABLE slow(id int PRIMARY KEY, v int NOT NULL)", "INSERT INTO slow SELECT g, 0 FROM generate_series(1, 100000) g");
        try (Connection c = cluster.connect(0); Statement st = c.createStatement()) {
            st.execute("SET statement_timeout = '1ms'");
            st.execute("SET lock_timeout = '1ms'");
            for (int k = 0; k < 5; k++) assertThat(st.executeUpdate("UPDATE slow SET v = v + 1")).isEqualTo(100000);
            // a block: the client's timeouts bound its statements, not what must follow once its log is ordered
            st.execute("SET statement_timeout = '5s'");
            c.setAutoCommit(false);
            assertThat(st.executeUpdate("UPDATE slow SET v = v + 1 WHERE id <= 10")).isEqualTo(10);
            c.commit();
            c.setAutoCommit(true);
            st.execute("SET statement_timeout = '1ms'");
            // the session keeps its own settings for what it runs itself
            try (ResultSet rs = st.executeQuery("SELECT current_setting('statement_timeout'), current_setting('lock_timeout')")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo("1ms");
                assertThat(rs.getString(2)).isEqualTo("1ms");
            }
        }
        assertThat(atEverySite("SELECT sum(v)::text FROM slow")).containsOnly(List.of("500010"));
        try (Connection c = cluster.connect(0); Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SHOW wanrep.sites")) {
            rs.next();   // this site's own row first
            assertThat(rs.getString(2)).as("site %s", rs.getString(1)).isEqualTo("serving");
        }
    }

    @Test
    void standardConformingStringsOffTravels() throws Exception {
        ddl("CREATE TABLE div(id int PRIMARY KEY, s text)");
        try (Connection c = cluster.connect(1); Statement st = c.createStatement()) {
            st.execute("SET standard_conforming_strings = off");
            st.execute("INSERT INTO div VALUES (1, 'a\\tb')");
        }
        assertThat(atEverySite("SELECT s FROM div WHERE id = 1")).containsOnly(List.of("a\tb"));
    }

    @Test
    void readOnlyDefaultRefusesTheUpdateEverywhere() throws Exception {
        ddl("CREATE TABLE ro(id int PRIMARY KEY)");
        try (Connection c = cluster.connect(2); Statement st = c.createStatement()) {
            st.execute("SET default_transaction_read_only = on");
            assertThatThrownBy(() -> st.execute("INSERT INTO ro VALUES (1)"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("25006"))
                    .hasMessageContaining("cannot execute INSERT in a read-only transaction");
            st.execute("SET default_transaction_read_only = off");
            st.execute("INSERT INTO ro VALUES (2)");
        }
        assertThat(atEverySite("SELECT id::text FROM ro ORDER BY id")).containsOnly(List.of("2"));
    }

    @Test
    void customSettingReadByATriggerTravels() throws Exception {
        ddl("CREATE TABLE tagged(id int PRIMARY KEY, tag text)",
                "CREATE FUNCTION tag_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.tag := coalesce(current_setting('app.tag', true), '<unset>'); RETURN NEW; END $$",
                "CREATE TRIGGER tag_row BEFORE INSERT ON tagged FOR EACH ROW EXECUTE FUNCTION tag_row()");
        try (Connection c = cluster.connect(1); Statement st = c.createStatement()) {
            st.execute("SET app.tag = 'blue'");
            st.execute("INSERT INTO tagged(id) VALUES (1)");
            st.execute("SELECT pg_catalog.set_config('app.tag', 'green', false)");
            st.execute("INSERT INTO tagged(id) VALUES (2)");
        }
        assertThat(atEverySite("SELECT id || '=' || tag FROM tagged ORDER BY id")).containsOnly(List.of("1=blue", "2=green"));
    }

    @Test
    void sessionReplicationRoleTravels() throws Exception {
        ddl("CREATE TABLE stamped(id int PRIMARY KEY, by_trigger bool NOT NULL DEFAULT false)",
                "CREATE FUNCTION stamp_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.by_trigger := true; RETURN NEW; END $$",
                "CREATE TRIGGER stamp_row BEFORE INSERT ON stamped FOR EACH ROW EXECUTE FUNCTION stamp_row()");
        try (Connection c = cluster.connect(2); Statement st = c.createStatement()) {
            st.execute("SET session_replication_role = replica");   // origin-role triggers do not fire
            st.execute("INSERT INTO stamped(id) VALUES (1)");
        }
        assertThat(atEverySite("SELECT id || '=' || by_trigger FROM stamped ORDER BY id")).containsOnly(List.of("1=false"));
    }

    @Test
    void extraFloatDigitsTravels() throws Exception {
        ddl("CREATE TABLE floats(id int PRIMARY KEY, t text)");
        try (Connection c = cluster.connect(1); Statement st = c.createStatement()) {
            st.execute("INSERT INTO floats SELECT 1, (0.1::float8 + 0.2::float8)::text");   // pgjdbc's startup extra_float_digits=3
            st.execute("SET extra_float_digits = 0");
            st.execute("INSERT INTO floats SELECT 2, (0.1::float8 + 0.2::float8)::text");
        }
        assertThat(atEverySite("SELECT id || '=' || t FROM floats ORDER BY id"))
                .containsOnly(List.of("1=0.30000000000000004", "2=0.3"));
    }

    /**
     * A pooled replica session ships only the settings that differ from what it has after RESET ALL, and begins
     * every transaction with RESET ALL: what an earlier transaction left in that session at session level (here a
     * function's set_config(..., false), which no session command shows) never reaches another client's update
     * that expects the default. Without the reset, the second insert read 0.3 at the sites whose pooled session
     * ran the first.
     */
    @Test
    void aSettingLeftInAPooledSessionDoesNotReachTheNextUpdate() throws Exception {
        ddl("CREATE TABLE leaked(id int PRIMARY KEY, t text)",
                "CREATE FUNCTION leak_digits() RETURNS text LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_catalog.set_config('extra_float_digits', '0', false); RETURN 'x'; END $$");
        try (Connection c = cluster.connect(1); Statement st = c.createStatement()) {
            st.execute("INSERT INTO leaked SELECT 1, leak_digits()");
        }
        try (Connection c = cluster.connect(1); Statement st = c.createStatement()) {
            st.execute("SET extra_float_digits = 1");   // PostgreSQL's default, so not shipped to a session that has it
            for (int i = 2; i <= 5; i++) st.execute("INSERT INTO leaked SELECT " + i + ", (0.1::float8 + 0.2::float8)::text");
        }
        assertThat(atEverySite("SELECT id || '=' || t FROM leaked WHERE id > 1 ORDER BY id"))
                .containsOnly(List.of("2=0.30000000000000004", "3=0.30000000000000004", "4=0.30000000000000004", "5=0.30000000000000004"));
    }

    /**
     * The other sites run a simple-query request with our BEGIN and COMMIT as one query string when their session has the
     * request's settings already: a request ending in a comment still commits, one that fails half-way leaves nothing
     * anywhere, and one PostgreSQL cannot parse (the whole string fails before our BEGIN runs) fails alike everywhere
     * without stopping a site that took the parse error for its BEGIN's.
     */
    @Test
    void requestsRunAsOneQueryElsewhereCommitAndFailAlike() throws Exception {
        ddl("CREATE TABLE oneq(id int PRIMARY KEY)");
        long before = org.wanrep.exec.WireTxnExecutor.oneQueryRuns();
        try (Connection c = cluster.connect(0, "preferQueryMode=simple"); Statement st = c.createStatement()) {
            st.execute("INSERT INTO oneq VALUES (1) -- a trailing comment, no new line");
            assertThatThrownBy(() -> st.execute("INSERT INTO oneq VALUES (2); INSERT INTO oneq VALUES (1)"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("23505"));
            assertThatThrownBy(() -> st.execute("INSERT INTO oneq VALUES (3; INSERT INTO oneq VALUES (4)"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("42601"));
            st.execute("INSERT INTO oneq VALUES (5); INSERT INTO oneq VALUES (6)");
        }
        assertThat(atEverySite("SELECT string_agg(id::text, ',' ORDER BY id) FROM oneq")).containsOnly(List.of("1,5,6"));
        assertThat(org.wanrep.exec.WireTxnExecutor.oneQueryRuns() - before).as("runs as one query at the two other sites").isGreaterThanOrEqualTo(6);
        for (int i = 0; i < 3; i++) {
            try (Connection c = cluster.connect(i); Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SHOW wanrep.sites")) {
                rs.next();
                assertThat(rs.getString(2)).as("site %s", rs.getString(1)).isEqualTo("serving");
            }
        }
    }

    /**
     * The origin runs a simple-query request with our BEGIN (and, in its turn, COMMIT) as one query string on the
     * client's own backend: the client must still get exactly PostgreSQL's answer to its text, results, notices, an
     * error's position counted from its own text, a deferred constraint's failure at COMMIT, and nothing of ours.
     */
    @Test
    void theOriginRunsARequestAsOneQueryAndAnswersAsPostgreSQLWould() throws Exception {
        ddl("CREATE TABLE oneo(id int PRIMARY KEY, v int, u int UNIQUE DEFERRABLE INITIALLY DEFERRED)", "INSERT INTO oneo VALUES (1, 0, 1)");
        String bad = "UPDATE oneo SET v = v + 1 WHERE id = 1; UPDATE oneo SET nosuch = 1 WHERE id = 1";
        Integer direct;
        try (Connection c = java.sql.DriverManager.getConnection(cluster.pgs.get(0).jdbcUrl("postgres") + "?preferQueryMode=simple", "postgres", "");
             Statement st = c.createStatement()) {
            direct = positionOf(() -> st.execute(bad));
        }
        long before = org.wanrep.exec.WireTxnExecutor.oneQueryRuns();
        try (Connection c = cluster.connect(0, "preferQueryMode=simple"); Statement st = c.createStatement()) {
            assertThat(positionOf(() -> st.execute(bad))).as("the error's position in the client's text").isEqualTo(direct).isPositive();
            // results and a notice: the request's, none of ours
            assertThat(st.execute("DO $$ BEGIN RAISE NOTICE 'hello'; END $$; UPDATE oneo SET v = v + 10 WHERE id = 1; SELECT v FROM oneo WHERE id = 1")).isFalse();
            assertThat((Object) st.getWarnings()).isNotNull();
            assertThat(st.getWarnings().getMessage()).isEqualTo("hello");
            assertThat((Object) st.getWarnings().getNextWarning()).isNull();
            assertThat(st.getMoreResults()).isFalse();
            assertThat(st.getUpdateCount()).isEqualTo(1);
            assertThat(st.getMoreResults()).isTrue();
            try (ResultSet rs = st.getResultSet()) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getInt(1)).isEqualTo(10);
                assertThat(rs.next()).isFalse();
            }
            assertThat(st.getMoreResults()).isFalse();
            assertThat(st.getUpdateCount()).isEqualTo(-1);
            // a deferred unique constraint fails at COMMIT: the client gets its error, no site keeps the rows
            assertThatThrownBy(() -> st.execute("INSERT INTO oneo VALUES (2, 0, 7); INSERT INTO oneo VALUES (3, 0, 7)"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("23505"));
            try (ResultSet rs = st.executeQuery("SELECT current_setting('transaction_isolation'), pg_current_xact_id_if_assigned() IS NULL")) {
                rs.next();   // the client's session is back outside any block
                assertThat(rs.getBoolean(2)).isTrue();
            }
        }
        assertThat(atEverySite("SELECT string_agg(id || ':' || v, ',' ORDER BY id) FROM oneo")).containsOnly(List.of("1:10"));
        assertThat(org.wanrep.exec.WireTxnExecutor.oneQueryRuns() - before).as("the origin's runs count too").isGreaterThanOrEqualTo(7);
    }

    private static Integer positionOf(org.assertj.core.api.ThrowableAssert.ThrowingCallable call) {
        try {
            call.call();
        } catch (org.postgresql.util.PSQLException e) {
            assertThat(e.getSQLState()).isEqualTo("42703");
            return e.getServerErrorMessage().getPosition();
        } catch (Throwable e) {
            throw new AssertionError(e);
        }
        throw new AssertionError("no error");
    }

    @Test
    void clientEncodingLatin1IsConvertedAlikeEverywhere() throws Exception {
        ddl("CREATE TABLE enc(id int PRIMARY KEY, s text)");
        ProcessBuilder pb = new ProcessBuilder(ClientTools.bin("psql").toString(), "-X", "-h", "127.0.0.1",
                "-p", Integer.toString(cluster.proxyPort(2)), "-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-f", "-")
                .redirectErrorStream(true);
        pb.environment().put("PGCLIENTENCODING", "LATIN1");
        Process p = pb.start();
        p.getOutputStream().write("INSERT INTO enc VALUES (1, 'caf\u00e9 \u00fcber');\n".getBytes(StandardCharsets.ISO_8859_1));
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(atEverySite("SELECT s FROM enc WHERE id = 1")).containsOnly(List.of("caf\u00e9 \u00fcber"));
    }

    @Test
    void updatesAfterSetRoleAreRefusedBeforeOrdering() throws Exception {
        ddl("CREATE TABLE roles(id int PRIMARY KEY)", "CREATE ROLE bob", "GRANT INSERT, SELECT ON roles TO bob");
        try (Connection c = cluster.connect(0); Statement st = c.createStatement()) {
            st.execute("SET ROLE bob");
            assertThatThrownBy(() -> st.execute("INSERT INTO roles VALUES (1)"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("0A000"));
            st.execute("RESET ROLE");
            st.execute("INSERT INTO roles VALUES (2)");
        }
        // a client user other than the replica's: its backends, here and elsewhere, run as the replica user alike
        java.util.Properties p = new java.util.Properties();
        p.setProperty("user", "alice");
        try (Connection c = java.sql.DriverManager.getConnection(cluster.url(1, ""), p); Statement st = c.createStatement()) {
            st.execute("INSERT INTO roles VALUES (3)");
        }
        assertThat(atEverySite("SELECT id::text FROM roles ORDER BY id")).containsOnly(List.of("2", "3"));
    }
}
